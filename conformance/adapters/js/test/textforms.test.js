import { test } from 'node:test';
import assert from 'node:assert/strict';
import { redactText } from '../lib/textredact.js';
import { assignments, base64Decoded, isCiphertextShaped, percentDecoded, referencesDecoded } from '../lib/textforms.js';

const CT = 'gAAAAAB' + 'pZk4yMrZw3XD'.repeat(10);
const KEY = 'sk-proj-Canary0123456789';

test('H8 assignments: header lines, env lines, URL queries, options, Python repr, XML', () => {
  const cases = [
    [`Authorization: Bearer ${KEY}`, 'Authorization: [redacted]'],
    [`OPENAI_API_KEY=${KEY}`, 'OPENAI_API_KEY=[redacted]'],
    [`https://h.test/?model=m&api_key=${KEY}&x=1`, 'https://h.test/?model=m&api_key=[redacted]&x=1'],
    [`agent --api-key ${KEY} --v`, 'agent --api-key [redacted] --v'],
    [`{'token': '${KEY}'}`, "{'token': '[redacted]'}"],
    [`<api_key>${KEY}</api_key>`, '<api_key>[redacted]</api_key>'],
    [`curl -H "Authorization: Bearer ${KEY}" https://h.test`, 'curl -H "Authorization: [redacted]" https://h.test'],
  ];
  for (const [input, expected] of cases) assert.equal(redactText(input), expected);
  assert.deepEqual([...assignments('author: Ada, model: m')].map((a) => a.name), ['author']);
});

test('H8 shapes: a Fernet token of 100 characters or more, never a 64-hex digest', () => {
  assert.equal(isCiphertextShaped(CT), true);
  assert.equal(isCiphertextShaped('gAAAAAB' + 'x'.repeat(92)), false);
  assert.equal(isCiphertextShaped('ab'.repeat(32)), false);
  assert.match(redactText(`state ${CT} end`), /^state \[redacted encrypted_content bytes=127 sha256=[0-9a-f]{64}\] end$/);
});

test('H8 decodings: base64, percent escapes and character references are read decoded', () => {
  assert.equal(base64Decoded(Buffer.from('{"api_key":"x"}').toString('base64')), '{"api_key":"x"}');
  assert.equal(percentDecoded('a%22b'), 'a"b');
  assert.equal(referencesDecoded('&quot;x&#39;'), '"x\'');
  assert.equal(redactText('p=' + Buffer.from(`{"api_key":"${KEY}"}`).toString('base64')), 'p=[redacted]');
  assert.match(redactText(encodeURIComponent(`{"api_key":"${KEY}"}`)), /^\{"redacted":"text"/);
});
