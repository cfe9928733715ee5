'use strict';
// The JavaScript side of tests/test_js_interop.py: one Node process per test module that
// answers requests, one JSON object per line on stdin, with one JSON line on stdout:
//
//   {"id": 1, "op": "cf.call", "args": {...}}  ->  {"id": 1, "ok": true, "result": ...}
//                                              or  {"id": 1, "ok": false, "error": "...",
//                                                   "status": 404, "errorCode": 40401}
//
// "cf.*" ops use @confluentinc/schemaregistry (Confluent's client), "kj.*" ops
// @kafkajs/confluent-schema-registry. Payloads travel as hex; Avro bytes values as
// {"$bytes": "<base64>"}; Protobuf messages in the proto3 JSON mapping. No network beyond the
// registry URL given in "init".

const readline = require('readline');

// stdout carries the answers only: library chatter goes to stderr
console.log = console.error;
console.info = console.error;

const sr = require('@confluentinc/schemaregistry');
const KafkajsRegistry = require('@kafkajs/confluent-schema-registry').SchemaRegistry;
const pb = require('@bufbuild/protobuf');

let url = null;
let client = null;
let kafkajs = null;

// Every public method of Confluent's client; "cf.call" may call these and nothing else.
const CLIENT_METHODS = new Set(
  Object.getOwnPropertyNames(sr.SchemaRegistryClient.prototype).filter(
    (name) => name !== 'constructor' && typeof sr.SchemaRegistryClient.prototype[name] === 'function',
  ),
);
const KAFKAJS_METHODS = new Set([
  'register',
  'getRegistryId',
  'getRegistryIdBySchema',
  'getLatestSchemaId',
]);

function newClient() {
  // no retries: an error answer must reach the test as it was sent
  return new sr.SchemaRegistryClient({ baseURLs: [url], maxRetries: 0 });
}

function fromWire(value) {
  if (Array.isArray(value)) return value.map(fromWire);
  if (value !== null && typeof value === 'object') {
    const keys = Object.keys(value);
    if (keys.length === 1 && keys[0] === '$bytes') return Buffer.from(value.$bytes, 'base64');
    const out = {};
    for (const key of keys) out[key] = fromWire(value[key]);
    return out;
  }
  return value;
}

function toWire(value) {
  if (Buffer.isBuffer(value) || value instanceof Uint8Array) {
    return { $bytes: Buffer.from(value).toString('base64') };
  }
  if (Array.isArray(value)) return value.map(toWire);
  if (typeof value === 'bigint') return value.toString();
  if (value instanceof Map) {
    const out = {};
    for (const [k, v] of value) out[k] = toWire(v);
    return out;
  }
  if (value !== null && typeof value === 'object') {
    const out = {};
    for (const key of Object.keys(value)) out[key] = toWire(value[key]);
    return out;
  }
  return value;
}

function headersFromWire(headers) {
  const out = {};
  for (const [name, hex] of Object.entries(headers ?? {})) out[name] = Buffer.from(hex, 'hex');
  return out;
}

function headersToWire(headers) {
  const out = {};
  for (const [name, value] of Object.entries(headers)) out[name] = Buffer.from(value).toString('hex');
  return out;
}

// magic byte 1 + 16-byte GUID (+ message indexes) in front of the data: the client ships only
// the id prefix and the header serializers, but takes any SchemaIdSerializerFunc
const guidPrefixSerializer = (topic, serdeType, payload, schemaId) =>
  Buffer.concat([schemaId.guidToBytes(), payload]);

const ID_SERIALIZERS = {
  id: sr.PrefixSchemaIdSerializer,
  guid: guidPrefixSerializer,
  header: sr.HeaderSchemaIdSerializer,
};

function serdeType(args) {
  return args.key ? sr.SerdeType.KEY : sr.SerdeType.VALUE;
}

// The file descriptor of a Protobuf schema as Confluent's client builds it from the registry
// (format=serialized, references resolved), for creating messages of its types.
async function protobufRegistry(subject) {
  const info = await client.getLatestSchemaMetadata(subject, 'serialized');
  const de = new sr.ProtobufDeserializer(client, sr.SerdeType.VALUE, {});
  const file = await de.toFileDesc(client, info);
  return pb.createMutableRegistry(file);
}

async function serialize(args) {
  const conf = { ...(args.conf ?? {}) };
  conf.schemaIdSerializer = ID_SERIALIZERS[args.framing ?? 'id'];
  if (conf.schemaIdSerializer == null) throw new Error(`unknown framing ${args.framing}`);
  const headers = {};
  const c = args.fresh ? newClient() : client;
  let ser;
  let value;
  switch (args.format) {
    case 'AVRO':
      ser = new sr.AvroSerializer(c, serdeType(args), conf);
      value = fromWire(args.value);
      break;
    case 'JSON':
      ser = new sr.JsonSerializer(c, serdeType(args), conf);
      value = args.value;
      break;
    case 'PROTOBUF': {
      const registry = await protobufRegistry(args.schemaSubject);
      const desc = registry.getMessage(args.messageType);
      if (desc == null) throw new Error(`no message ${args.messageType} in ${args.schemaSubject}`);
      conf.registry = registry;
      ser = new sr.ProtobufSerializer(c, serdeType(args), conf);
      value = pb.fromJson(desc, args.value, { registry });
      break;
    }
    default:
      throw new Error(`unknown format ${args.format}`);
  }
  const bytes = await ser.serialize(args.topic, value, headers);
  return { hex: bytes.toString('hex'), headers: headersToWire(headers) };
}

async function deserialize(args) {
  const conf = { ...(args.conf ?? {}) };
  const c = args.fresh ? newClient() : client;
  const payload = Buffer.from(args.hex, 'hex');
  const headers = headersFromWire(args.headers);
  switch (args.format) {
    case 'AVRO': {
      const de = new sr.AvroDeserializer(c, serdeType(args), conf);
      return { value: toWire(await de.deserialize(args.topic, payload, headers)) };
    }
    case 'JSON': {
      const de = new sr.JsonDeserializer(c, serdeType(args), conf);
      return { value: await de.deserialize(args.topic, payload, headers) };
    }
    case 'PROTOBUF': {
      const de = new sr.ProtobufDeserializer(c, serdeType(args), conf);
      const msg = await de.deserialize(args.topic, payload, headers);
      const desc = de.fileRegistry.getMessage(msg.$typeName);
      // proto field names: descriptors from a registry (Confluent's too) carry no json_name
      const json = pb.toJson(desc, msg, { registry: de.fileRegistry, useProtoFieldName: true });
      return { type: msg.$typeName, value: json };
    }
    default:
      throw new Error(`unknown format ${args.format}`);
  }
}

// kafkajs: registered schemas are {type, schema, references}; values plain JSON
async function kjEncode(args) {
  const bytes = await kafkajs.encode(args.id, fromWire(args.value));
  return { hex: bytes.toString('hex') };
}

async function kjDecode(args) {
  const value = await kafkajs.decode(Buffer.from(args.hex, 'hex'));
  if (value != null && value.$type != null) {
    // a protobufjs message: its proto3 JSON-like object form
    return {
      type: value.$type.fullName.replace(/^\./, ''),
      value: value.$type.toObject(value, { longs: String, enums: String, bytes: String, json: true }),
    };
  }
  return { value: toWire(value) };
}

const OPS = {
  init: async (args) => {
    url = args.url;
    client = newClient();
    kafkajs = new KafkajsRegistry({ host: url, retry: { retries: 0 } });
    return { node: process.version };
  },
  'cf.call': async (args) => {
    if (!CLIENT_METHODS.has(args.method)) throw new Error(`not a client method: ${args.method}`);
    const c = args.fresh ? newClient() : client;
    return await c[args.method](...(args.args ?? []));
  },
  'cf.serialize': serialize,
  'cf.deserialize': deserialize,
  'kj.call': async (args) => {
    if (!KAFKAJS_METHODS.has(args.method)) throw new Error(`not a kafkajs method: ${args.method}`);
    return await kafkajs[args.method](...(args.args ?? []));
  },
  'kj.encode': kjEncode,
  'kj.decode': kjDecode,
};

function describeError(err) {
  const out = { ok: false, error: String(err && err.message ? err.message : err) };
  if (err && err.name) out.name = err.name;
  // Confluent's RestError
  if (err && typeof err.status === 'number') out.status = err.status;
  if (err && typeof err.errorCode === 'number') out.errorCode = err.errorCode;
  // kafkajs (mappersmith) errors carry the response as status + body
  if (err && err.originalError && typeof err.originalError.status === 'number') {
    out.status = err.originalError.status;
  }
  return out;
}

async function handle(line) {
  let request;
  try {
    request = JSON.parse(line);
  } catch (err) {
    return { id: null, ok: false, error: `bad request line: ${err.message}` };
  }
  const op = OPS[request.op];
  if (op == null) return { id: request.id, ok: false, error: `unknown op ${request.op}` };
  try {
    const result = await op(request.args ?? {});
    return { id: request.id, ok: true, result: result === undefined ? null : toWire(result) };
  } catch (err) {
    return { id: request.id, ...describeError(err) };
  }
}

// one request at a time, answered in order
async function main() {
  const lines = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
  for await (const line of lines) {
    if (line.trim() === '') continue;
    const answer = await handle(line);
    process.stdout.write(JSON.stringify(answer) + '\n');
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
