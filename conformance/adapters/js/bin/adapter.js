#!/usr/bin/env node
// Conformance adapter entry point: node conformance/adapters/js/bin/adapter.js [--oneshot]
import { main } from '../lib/adapter.js';

main();
