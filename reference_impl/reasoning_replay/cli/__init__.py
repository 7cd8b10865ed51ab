"""The ``conformance`` command line: one module per subcommand family, each parsing, calling the
package and printing (the suite's commands in :mod:`.main`; ``validate``, ``export`` and ``scan``,
the stored-history commands of SPEC §10, in their own modules)."""
