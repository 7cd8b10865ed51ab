// The Vercel AI SDK (`ai` with `@ai-sdk/openai`) behind the conformance adapter protocol.
//
//     node conformance/implementations/vercel-ai/adapter.mjs
//
// Runs on the packages `npm ci` installed here (tools/install_implementation.py vercel-ai) and
// calls their own code; it imports nothing of reasoning-replay (the SDK is measured, not
// helped). It reads histories in the items form only (PROTOCOL.md#items-form) and builds every
// request with `generateText` on a provider made by `createOpenAI({ apiKey, fetch })`, whose
// `fetch` records the request body and answers with a Responses JSON body: nothing of a request
// is assembled here. What each operation calls:
//
// - `replay`: the history mapped into `ModelMessage`s (below), then `generateText` with
//   `providerOptions.openai.store: false` (what a user following SPEC P5 sets; the SDK then adds
//   the include entry itself). @ai-sdk/openai builds the input in `convertToOpenAIResponsesInput`
//   (`OpenAIResponsesLanguageModel.prepareRequest`). The reply is the recorded body's `input`.
// - `dedupe`: the SDK has no dedupe function; the entries go through the replay path, one
//   assistant turn per entry, and an entry is kept when its item comes out of the request.
// - `plan`: the history mapped as for `replay`; the effort as the SDK expresses it, the
//   request-level `providerOptions.openai.reasoningEffort` (with `reasoningSummary`,
//   `reasoningContext`, `reasoningMode` for the other members of `metadata.reasoning`); the
//   instance key, or `metadata.prompt_cache_key`, as `promptCacheKey` (the key is the user's,
//   K1); `store: false` (P5); other `metadata` members as the provider option of the same
//   meaning. A WebSocket continuation is the SDK's continuation, `previousResponseId` set to the
//   last assistant message's response id, with the messages its own multi-step loop passes (all
//   of them). No `reasoningEffortUpdate` is attached for the history's per-turn efforts: the SDK
//   keeps no effort state, and attaching one is the user's work.
// - `defaults`: the request of `generateText` with a model and a prompt and nothing else.
//
// How a message of the items form becomes a `ModelMessage`, as the SDK itself stores one:
//
// - an `assistant` message is the assistant message of `response.messages` after a
//   `generateText` turn whose response `output` is the message's items, in order (`turnMessage`):
//   the SDK's own `doGenerate` makes one reasoning part per summary part (an empty summary gives
//   one empty part), each with `providerOptions.openai` `itemId` and `reasoningEncryptedContent`;
//   a text part per output text (`itemId`, `phase`); a tool call per function call (`itemId`, its
//   arguments parsed); compaction as its custom part. A message item whose `content` is a string
//   is the provider's `output_text` part. The SDK records no issuer: every part is under the
//   `openai` namespace whatever the base URL, so `provider` is not mapped;
// - any other message becomes one message per item, in order, as a user of the SDK writes them:
//   a `message` of role `user` `{role: "user", content}` (a string as given; `input_text` parts
//   as text parts, `input_image` as file parts), of role `system` or `developer`
//   `{role: "system", content}`; a `function_call_output` a `tool` message with its
//   `tool-result` (`output: {type: "text", value}`, as `generateText` stores a tool's string
//   result); a stored `configuration_update` the message a user attaches by hand, an empty system
//   message with `providerOptions.openai.reasoningEffortUpdate`; a `compaction` item, which the
//   SDK keeps only in an assistant message, the assistant message of a turn whose output is that
//   item.
//
// A case holding what the SDK has no part or option for (a `compaction_trigger` among the
// history, an `item_reference`, custom tool calls, web search calls, a user message among an
// assistant's items, a WebSocket transport, the compact endpoint, `metadata.input`,
// `multi_agent`, `extra_body`) is answered `skipped`. Where the SDK throws before sending, the
// reply is a rejection with the code `raised` (not in the SPEC registry: the SDK has none).

import { createInterface } from "node:readline";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { generateText, jsonSchema, tool } from "ai";
import { createOpenAI } from "@ai-sdk/openai";

// The SDK prints its warnings with console.warn; the protocol's stdout stays clean either way.
globalThis.AI_SDK_LOG_WARNINGS = false;

const PROTOCOL_VERSION = 1;
const OPERATIONS = ["replay", "dedupe", "plan", "defaults"];
const RAISED = "raised";
const DEFAULT_TARGET = "openai";
const INCLUDE = ["reasoning.encrypted_content"];
// A model for `replay` and `dedupe`, whose vectors name none; xAI's own for target `xai`.
const REPLAY_MODELS = { xai: "grok-4.6" };
const REPLAY_MODEL = "gpt-6-astra";
// The base URL a user gives `createOpenAI` for each target provider; `fetch` is the recorder,
// so nothing leaves the process.
const BASE_URLS = {
  openai: "https://api.openai.com/v1",
  codex: "https://chatgpt.com/backend-api/codex",
  xai: "https://api.x.ai/v1",
};
// SPEC F8's override members and the `providerOptions.openai` option each one is; `reasoning`
// and `model` are read by `planSettings`; any other member makes the case `skipped`.
const METADATA_OPTIONS = {
  prompt_cache_key: "promptCacheKey",
  truncation: "truncation",
  previous_response_id: "previousResponseId",
};
const REASONING_OPTIONS = {
  summary: "reasoningSummary",
  context: "reasoningContext",
  mode: "reasoningMode",
};
const OUTPUT_IDS = { message: "msg", function_call: "fc" };
const PLAN_FIELDS = [
  "model",
  "store",
  "include",
  "reasoning",
  "prompt_cache_key",
  "input",
  "previous_response_id",
];

const require = createRequire(import.meta.url);

function packageVersion(name) {
  const path = require.resolve(`${name}/package.json`, { paths: [import.meta.dirname] });
  return JSON.parse(readFileSync(path, "utf8")).version;
}

/** A reply other than an output: `skipped`. */
class Reply extends Error {
  constructor(document) {
    super("reply");
    this.document = document;
  }
}

const skipped = (reason) => new Reply({ skipped: { reason } });

/** The SDK threw before it sent the request. */
class Refused extends Error {}

function describe(value) {
  const text = JSON.stringify(value);
  return text.length <= 120 ? text : `${text.slice(0, 117)}...`;
}

/**
 * The fake `fetch`: records each request body and answers with a completed response whose
 * `output` is `output` (a minimal assistant message unless a turn sets it).
 */
function recorder(output = null, responseId = "resp_conformance") {
  const bodies = [];
  const fetch = async (_url, init) => {
    const body = JSON.parse(init.body);
    bodies.push(body);
    const response = {
      id: responseId,
      object: "response",
      created_at: 0,
      status: "completed",
      model: body.model ?? "model",
      output: output ?? [
        {
          type: "message",
          id: "msg_conformance",
          role: "assistant",
          status: "completed",
          content: [{ type: "output_text", text: "ok", annotations: [] }],
        },
      ],
      usage: {
        input_tokens: 0,
        output_tokens: 0,
        total_tokens: 0,
        input_tokens_details: { cached_tokens: 0 },
        output_tokens_details: { reasoning_tokens: 0 },
      },
    };
    return new Response(JSON.stringify(response), {
      status: 200,
      headers: { "content-type": "application/json" },
    });
  };
  return { bodies, fetch };
}

/** The Responses model of `createOpenAI` for `target`, on the recording `fetch`. */
function responsesModel(target, fetch, modelId) {
  const provider = createOpenAI({
    apiKey: "conformance",
    baseURL: BASE_URLS[target] ?? `https://${target}.conformance.invalid/v1`,
    fetch,
  });
  return provider.responses(modelId);
}

/** `generateText`; throws Refused when the SDK throws. */
async function generate(options) {
  try {
    return await generateText({ maxRetries: 0, allowSystemInMessages: true, ...options });
  } catch (error) {
    throw new Refused(`${error?.name ?? "Error"}: ${error?.message ?? error}`);
  }
}

function recordedRequest(bodies) {
  if (bodies.length !== 1) throw new Error(`${bodies.length} requests recorded, one expected`);
  return bodies[0];
}

// ---------------------------------------------------------------------------------------------
// the items form → ModelMessages

/**
 * An assistant item as the provider returns it: a Responses output message holds parts, and a
 * message or function call always has an id (one the history lacks is `OUTPUT_IDS`', which the
 * SDK never sends under `store: false`: it sends neither item's id then).
 */
function outputItem(item, index) {
  if (item.id === undefined && item.type in OUTPUT_IDS) {
    return outputItem({ ...item, id: `${OUTPUT_IDS[item.type]}_conformance_${index}` }, index);
  }
  if (item.type === "message" && item.role !== "assistant") {
    throw skipped(`the SDK keeps no ${JSON.stringify(item.role)} message among an assistant's items`);
  }
  if (["compaction_trigger", "item_reference", "custom_tool_call", "web_search_call"].includes(item.type)) {
    throw skipped(`the SDK keeps no part for an assistant ${describe(item)}`);
  }
  if (item.type === "message" && typeof item.content === "string") {
    return { ...item, content: [{ type: "output_text", text: item.content, annotations: [] }] };
  }
  if (item.type === "message" && Array.isArray(item.content)) {
    return { ...item, content: item.content.map((part) => ({ annotations: [], ...part })) };
  }
  return item;
}

/** The assistant message `response.messages` holds after a turn whose output is `items`. */
async function turnMessage(items) {
  const output = items.map(outputItem);
  const tools = {};
  for (const item of output) {
    if (item.type === "function_call") {
      tools[item.name] = tool({ inputSchema: jsonSchema({ type: "object" }) });
    }
  }
  const { fetch } = recorder(output);
  let result;
  try {
    result = await generate({
      model: responsesModel(DEFAULT_TARGET, fetch, REPLAY_MODEL),
      prompt: "turn",
      tools,
    });
  } catch (error) {
    // the SDK refuses this response when it receives it, so it never stores such a message
    throw skipped(`the SDK refuses a response whose output is ${describe(output)}: ${error.message}`);
  }
  const messages = result.response.messages;
  if (messages.length !== 1 || messages[0].role !== "assistant") {
    throw new Error(`the turn stored ${describe(messages)}, one assistant message expected`);
  }
  return messages[0];
}

function userContent(content) {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) {
    throw skipped(`a message whose content is ${describe(content)}: the SDK's is a string or parts`);
  }
  return content.map((part) => {
    if (part?.type === "input_text") return { type: "text", text: part.text };
    if (part?.type === "input_image" && typeof part.image_url === "string") {
      return { type: "file", mediaType: "image/*", data: part.image_url };
    }
    throw skipped(`the SDK has no user content part for ${describe(part)}`);
  });
}

/** Maps one items-form history into ModelMessages (module comment). */
async function modelMessages(history) {
  const out = [];
  const toolNames = new Map();
  for (const message of history) {
    const items = message.items ?? [];
    if (message.role === "assistant") {
      for (const item of items) {
        if (item.type === "function_call") toolNames.set(item.call_id, item.name);
      }
      out.push(await turnMessage(items));
      continue;
    }
    for (const item of items) out.push(await requestMessage(item, toolNames));
  }
  return out;
}

async function requestMessage(item, toolNames) {
  const kind = item.type ?? "message";
  if (kind === "message") {
    if (item.role === "user") return { role: "user", content: userContent(item.content) };
    if (item.role === "system" || item.role === "developer") {
      if (typeof item.content !== "string") {
        throw skipped(`a ${item.role} message whose content is not a string: the SDK's is a string`);
      }
      return { role: "system", content: item.content };
    }
    throw skipped(`the SDK has no message of role ${JSON.stringify(item.role)} from the user`);
  }
  if (kind === "function_call_output" && typeof item.output === "string") {
    return {
      role: "tool",
      content: [
        {
          type: "tool-result",
          toolCallId: item.call_id,
          toolName: toolNames.get(item.call_id) ?? "tool",
          output: { type: "text", value: item.output },
        },
      ],
    };
  }
  if (kind === "configuration_update" && Object.keys(item).every((k) => ["type", "reasoning"].includes(k))) {
    return {
      role: "system",
      content: "",
      providerOptions: { openai: { reasoningEffortUpdate: item.reasoning?.effort } },
    };
  }
  if (kind === "compaction") return turnMessage([item]);
  throw skipped(`the SDK keeps no message for ${describe(item)}`);
}

// ---------------------------------------------------------------------------------------------
// operations

function historyOf(data) {
  const history = data.history;
  if (history?.form !== "items") {
    throw new Error("the history is not in the items form (this adapter reads only that form)");
  }
  return history.messages;
}

async function opReplay(data) {
  if (data.options?.conflict_policy === "reject") {
    throw skipped("the SDK has no strict conflict policy (SPEC D3 MAY): it detects no conflict");
  }
  const target = data.target.provider;
  const messages = await modelMessages(historyOf(data));
  const { bodies, fetch } = recorder();
  await generate({
    model: responsesModel(target, fetch, REPLAY_MODELS[target] ?? REPLAY_MODEL),
    messages,
    providerOptions: { openai: replayOptions(target) },
  });
  return { input: recordedRequest(bodies).input, diagnostics: [] };
}

/**
 * What a user following SPEC P5 sets: `store: false` (the SDK adds the include entry itself for
 * a model it knows reasons); for xAI's models, which the SDK's catalog does not know, also the
 * include entry and `forceReasoning`, as its documentation says for such a model.
 */
function replayOptions(target, reasoningModel = true) {
  return target === "xai" && reasoningModel
    ? { store: false, include: [...INCLUDE], forceReasoning: true }
    : { store: false };
}

/**
 * Dedupe through the replay path: one history holding one assistant turn per entry, each after
 * a user message, sent once per provider of the entries; an entry is kept when its item is in
 * that provider's request, in order; otherwise it counts as dropped.
 */
async function opDedupe(data) {
  if (data.options?.conflict_policy === "reject") {
    throw skipped("the SDK has no strict conflict policy (SPEC D3 MAY): it detects no conflict");
  }
  const entries = data.entries;
  const history = [];
  entries.forEach((entry, index) => {
    history.push({ role: "user", items: [{ type: "message", role: "user", content: `turn ${index}` }] });
    history.push({ role: "assistant", provider: entry.provider, items: [entry.item] });
  });
  history.push({ role: "user", items: [{ type: "message", role: "user", content: "next" }] });
  const decisions = entries.map(() => "drop_duplicate");
  for (const provider of new Set(entries.map((entry) => entry.provider))) {
    const sent = await opReplay({
      history: { form: "items", messages: history },
      target: { provider, transport: "sse" },
    });
    let reasoning = sent.input.filter((item) => item.type === "reasoning");
    entries.forEach((entry, index) => {
      if (entry.provider !== provider) return;
      const found = reasoning.findIndex(
        (r) => r.id === entry.item.id && r.encrypted_content === entry.item.encrypted_content,
      );
      if (found >= 0) {
        decisions[index] = "keep";
        reasoning = reasoning.slice(found + 1);
      }
    });
  }
  return {
    decisions,
    counters: {
      replay_deduplicated_exact_count: decisions.filter((d) => d === "drop_duplicate").length,
      replay_id_ciphertext_conflict_count: 0,
    },
  };
}

/** The model id and `providerOptions.openai` of a plan (module comment). */
function planSettings(data) {
  const target = data.target_provider ?? DEFAULT_TARGET;
  const options = { ...replayOptions(target, data.reasoning_model !== false), promptCacheKey: data.instance_key };
  let model = data.model;
  if (data.desired_effort != null) options.reasoningEffort = data.desired_effort;
  const overrides = data.metadata;
  if (overrides != null && (typeof overrides !== "object" || Array.isArray(overrides))) {
    throw skipped("metadata that is not an object: the SDK's options are an object");
  }
  for (const [name, value] of Object.entries(overrides ?? {})) {
    if (value === null) continue;
    if (name === "model") {
      model = value;
    } else if (name === "reasoning") {
      if (typeof value !== "object" || Array.isArray(value)) {
        throw skipped(`reasoning ${describe(value)}: the SDK's reasoning options are members`);
      }
      for (const [member, setting] of Object.entries(value)) {
        if (setting === null) continue;
        if (member === "effort") options.reasoningEffort = setting;
        else if (member in REASONING_OPTIONS) options[REASONING_OPTIONS[member]] = setting;
        else throw skipped(`reasoning.${member}: the SDK has no such option`);
      }
    } else if (name === "text" && typeof value === "object" && Object.keys(value).join() === "verbosity") {
      options.textVerbosity = value.verbosity;
    } else if (name === "context_management" && Array.isArray(value)) {
      options.contextManagement = value.map((entry) => ({
        type: entry?.type,
        compactThreshold: entry?.compact_threshold,
      }));
    } else if (name === "max_output_tokens") {
      options.maxOutputTokens = value;
    } else if (name in METADATA_OPTIONS) {
      options[METADATA_OPTIONS[name]] = value;
    } else {
      throw skipped(`metadata.${name}: the SDK has no such option`);
    }
  }
  return { model, options };
}

async function opPlan(data) {
  const transport = data.transport ?? "sse";
  if (transport === "websocket") {
    throw skipped("the SDK has no WebSocket transport for the Responses API");
  }
  if ((data.endpoint ?? "responses") !== "responses") {
    throw skipped("the SDK does not call the standalone compact endpoint");
  }
  const target = data.target_provider ?? DEFAULT_TARGET;
  const { model, options } = planSettings(data);
  const { maxOutputTokens, ...openai } = options;
  const history = historyOf(data);
  if (transport === "websocket_continuation") {
    const last = history.findLast((message) => message.role === "assistant");
    if (typeof last?.response_id === "string") openai.previousResponseId = last.response_id;
  }
  const messages = await modelMessages(history);
  const { bodies, fetch } = recorder();
  if (typeof model !== "string") {
    // the SDK's model id is a string: another value is what a user cannot pass
    throw new Refused(`TypeError: model ${describe(model)} is not a string`);
  }
  await generate({
    model: responsesModel(target, fetch, model),
    messages,
    providerOptions: { openai },
    ...(maxOutputTokens !== undefined && { maxOutputTokens }),
  });
  const body = recordedRequest(bodies);
  const request = {};
  for (const name of PLAN_FIELDS) if (name in body) request[name] = body[name];
  return { request, diagnostics: [] };
}

async function opDefaults(data) {
  const { bodies, fetch } = recorder();
  await generate({ model: responsesModel(data.target_provider, fetch, data.model), prompt: "hello" });
  const { input: _input, ...request } = recordedRequest(bodies);
  return { request };
}

const HANDLERS = { replay: opReplay, dedupe: opDedupe, plan: opPlan, defaults: opDefaults };

async function handle(request) {
  const cmd = request?.cmd;
  if (cmd === "start") {
    return {
      protocol: PROTOCOL_VERSION,
      implementation: {
        name: "vercel-ai",
        version: packageVersion("ai"),
        language: "javascript",
        homepage: "https://www.npmjs.com/package/ai",
        operations: OPERATIONS,
        history_formats: ["items"],
        // every part's providerOptions are under "openai", whatever the base URL
        provenance: "none",
        packages: { ai: packageVersion("ai"), "@ai-sdk/openai": packageVersion("@ai-sdk/openai") },
        node: process.versions.node,
      },
    };
  }
  if (cmd === "stop") return null;
  const seq = Number.isInteger(request?.seq) && request.seq >= 0 ? request.seq : 0;
  const { operation, input } = request ?? {};
  if (cmd !== "run" || !(operation in HANDLERS) || typeof input !== "object" || input === null) {
    return { seq, error: { message: `cannot run ${JSON.stringify(cmd)} ${JSON.stringify(operation)}` } };
  }
  try {
    return { seq, output: await HANDLERS[operation](input) };
  } catch (error) {
    if (error instanceof Reply) return { seq, ...error.document };
    if (error instanceof Refused) return { seq, reject: { code: RAISED, message: error.message.slice(0, 2000) } };
    return { seq, error: { message: `${error?.name}: ${error?.message}`, traceback: error?.stack ?? "" } };
  }
}

async function serve(oneshot) {
  const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
  for await (const line of lines) {
    if (!line.trim()) continue;
    let reply;
    try {
      reply = await handle(JSON.parse(line));
    } catch (error) {
      reply = { seq: 0, error: { message: `not JSON: ${error.message}` } };
    }
    if (reply === null) break;
    process.stdout.write(`${JSON.stringify(reply)}\n`);
    if (oneshot) break;
  }
}

await serve(process.argv.includes("--oneshot"));
