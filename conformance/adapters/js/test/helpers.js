// Shared fixtures for the unit tests (not a test file itself: no .test.js suffix).
export const SCHEMA = 'fast-agent.openai-responses.reasoning-replay';

export function item(overrides = {}) {
  return { type: 'reasoning', id: 'rs_1', summary: [{ type: 'summary_text', text: 's' }], encrypted_content: 'c', ...overrides };
}

export function envelope(itemValue = item(), extra = {}) {
  return { schema: SCHEMA, version: 1, item: itemValue, ...extra };
}

/** Envelope text as a writer would produce it (plain JSON.stringify is fine for fixtures). */
export function envText(itemValue, extra) {
  return JSON.stringify(envelope(itemValue, extra));
}
