// Public API of the JavaScript implementation.
export { CODES, ReplayError, isRegistryCode } from './codes.js';
export { parseStrict, parseText, stringify, lexicalDepth, JsonTextError, MAX_TEXT_BYTES, MAX_DEPTH } from './jsontext.js';
export { readEnvelope, envelopeValueCode, itemCode, ENVELOPE_SCHEMA } from './envelope.js';
export { captureEnvelopeText, captureItem, canonicalEnvelopeText, FINAL_SOURCES } from './capture.js';
export { buildInput, REPLAY_CHANNEL, ITEMS_FORM, isItemsForm } from './replay.js';
export { Deduper, dedupeEntries } from './dedupe.js';
export { redact, diagnosticView, isSensitiveName } from './redact.js';
export { redactText } from './textredact.js';
export { telemetryCounters } from './telemetry.js';
export { plan, configurationUpdate, isGenuineUserTurn, hasNativeCompaction, TOOL_MEDIA_CHANNEL } from './plan.js';
export { readCacheState, readRecordMembers, cacheStateText, CACHE_STATE_CHANNEL, ALLOWED_EFFORTS, DEFAULT_UPDATE_CAPABLE_MODELS } from './cachestate.js';
export { buildSegments } from './replay.js';
export { issuerOf, PROVIDER_NAME_REGISTRY } from './providers.js';
export { exportHistory, isHistory, redactedRecord, redactedRecordText, exportMarker, EXPORT_MARKER, EXPORT_MODES } from './export.js';
