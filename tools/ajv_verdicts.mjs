// Ajv (draft 2020-12) verdicts for tools/schema_agreement.py: one JSON text per stdin line in
// (itself encoded as a JSON string), "true"/"false" per line out. Usage: node ajv_verdicts.mjs SCHEMA_DIR SCHEMA_ID
// Ajv is resolved from the JavaScript implementation's dependencies (conformance/adapters/js).
import { readFileSync, readdirSync } from "node:fs";
import { createRequire } from "node:module";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const require = createRequire(join(here, "..", "conformance", "adapters", "js", "package.json"));
const Ajv2020 = require("ajv/dist/2020").default;

const [schemaDir, schemaId] = process.argv.slice(2);
// strict: true keeps Ajv honest about unknown keywords; unicode: true counts code points.
const ajv = new Ajv2020({ strict: true, allErrors: false });
for (const name of readdirSync(schemaDir).filter((n) => n.endsWith(".schema.json"))) {
  ajv.addSchema(JSON.parse(readFileSync(join(schemaDir, name), "utf8")));
}
const validate = ajv.getSchema(schemaId);
if (!validate) throw new Error(`no schema with $id ${schemaId}`);

const lines = readFileSync(0, "utf8").split("\n").filter((line) => line.length > 0);
process.stdout.write(lines.map((line) => String(validate(JSON.parse(JSON.parse(line))))).join("\n") + "\n");
