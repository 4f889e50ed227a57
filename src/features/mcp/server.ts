// One MCP server per request (stateless Streamable HTTP: no session is held between
// requests), bound to the caller's actor. Tool failures are MCP tool errors (isError: true)
// whose text carries Pier's error code; protocol failures (unknown tool) are JSON-RPC errors.
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  type CallToolRequest,
  type CallToolResult,
} from "@modelcontextprotocol/sdk/types.js";
import type { TSchema } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import type { Actor, Deps } from "../../core/context";
import { scopeRank } from "../../core/context";
import { ApiError, errorCatalogue } from "../../core/errors";
import { serverVersion } from "../../core/version";
import { selectAccount } from "../../http/auth";
import { getAccount } from "../accounts";
import { tools } from "./tools";

const byName = new Map(tools.map((x) => [x.name, x]));
// Every tool also takes `account_id`, as every REST call does: members of several accounts
// pick the one to act on (the credential's default account otherwise).
const accountIdSchema = {
  type: "string",
  pattern: "^acc_[a-z0-9]{1,40}$",
  description: "Act on this account instead of the credential's default one (you must be a member).",
};
// TypeBox schemas are JSON Schema plus symbol-keyed metadata; JSON round-trip drops the latter.
const listed = tools.map((x) => {
  const schema = JSON.parse(JSON.stringify(x.inputSchema));
  return { name: x.name, description: x.description, inputSchema: { ...schema, properties: { ...schema.properties, account_id: accountIdSchema } } };
});

/**
 * What the tool calls of one POST may answer in all (the characters of their results). A
 * JSON-RPC batch holds up to 100 calls, and the whole answer is built in memory: 100 reads of a
 * 512 KiB file answered 249 MB (each result is in `text` and in `structuredContent`) and held the
 * event loop for seconds, where 100 REST reads would have been streamed one by one. Past this
 * budget the remaining calls of the POST are refused, without running, with MCP_ANSWER_TOO_LARGE.
 */
export const MAX_MCP_ANSWER_CHARS = 4 * 1024 * 1024;

/** Problems reported per invalid call; the rest are not even looked for. */
const MAX_REPORTED_ERRORS = 20;

/**
 * The first problems of invalid arguments, found lazily: Value.Errors is a generator, and
 * spreading it walked every element of a huge invalid array (1 MiB of them: ~0.7 s of the event
 * loop, ~100 MiB) before keeping 20, as REST's body validation never does.
 */
function firstProblems(schema: TSchema, args: unknown): { path: string; message: string }[] {
  const out: { path: string; message: string }[] = [];
  for (const e of Value.Errors(schema, args)) {
    out.push({ path: e.path, message: e.message });
    if (out.length >= MAX_REPORTED_ERRORS) break;
  }
  return out;
}

function toolError(err: ApiError): CallToolResult {
  const error = { code: err.code, message: err.message, hint: errorCatalogue[err.code].hint, ...(err.details ? { details: err.details } : {}) };
  return { isError: true, content: [{ type: "text", text: `${err.code}: ${err.message}\n${JSON.stringify({ error })}` }], structuredContent: { error } };
}

/**
 * `charge(accountId)` takes one unit of that account's request budget (throws 429). A POST was
 * charged once to the credential's account on arrival; a JSON-RPC batch can carry up to 100
 * tool calls, so every call pays on the account it acts in, as a REST request does, except the
 * first on the credential's own account, which that arrival charge paid for.
 */
export function buildMcpServer(deps: Deps, actor: Actor, charge: (accountId: string) => void): Server {
  let arrivalCoversOne = true;
  const chargeCall = (accountId: string) => {
    if (arrivalCoversOne && accountId === actor.accountId) arrivalCoversOne = false;
    else charge(accountId);
  };
  const server = new Server(
    { name: "pier", version: serverVersion },
    {
      capabilities: { tools: {} },
      instructions:
        "Pier: file buckets, static site publishing and inbound email. Call pier_status first. Tools enforce the connection's scope (bucket_read, bucket_write, bucket_admin); failures carry Pier's error code.",
    },
  );
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: listed }));
  // A batch's calls run one after another, each after a turn of the event loop (other requests
  // are answered in between, as between REST requests), and share one answer budget.
  let answered = 0;
  let previous: Promise<unknown> = Promise.resolve();
  server.setRequestHandler(CallToolRequestSchema, (req): Promise<CallToolResult> => {
    const mine = previous.then(() => new Promise((resolve) => setImmediate(resolve))).then(() => callTool(req));
    previous = mine.catch(() => {});
    return mine;
  });
  const callTool = async (req: CallToolRequest): Promise<CallToolResult> => {
    const tool = byName.get(req.params.name);
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${req.params.name.slice(0, 100)}. Call tools/list for the available tools.`);
    if (answered >= MAX_MCP_ANSWER_CHARS) {
      return toolError(
        new ApiError("MCP_ANSWER_TOO_LARGE", `The earlier calls of this request answered ${answered} characters; send ${tool.name} in another request.`, {
          max_answer_chars: MAX_MCP_ANSWER_CHARS,
        }),
      );
    }
    const { account_id: accountId, ...args } = req.params.arguments ?? {};
    try {
      if (accountId !== undefined && (typeof accountId !== "string" || !/^acc_[a-z0-9]{1,40}$/.test(accountId))) {
        throw new ApiError("VALIDATION_FAILED", "account_id must be an account id (acc_...).", { field: "account_id" });
      }
      const acting = selectAccount(deps, actor, accountId as string | undefined);
      chargeCall(acting.accountId);
      if (!Value.Check(tool.inputSchema, args)) {
        const fields = firstProblems(tool.inputSchema, args);
        throw new ApiError("VALIDATION_FAILED", `Invalid arguments for ${tool.name}: ${fields.map((f) => `${f.path || "(root)"} ${f.message}`).join("; ")}`, {
          fields,
        });
      }
      if (scopeRank[acting.scope] < scopeRank[tool.scope]) {
        throw new ApiError("FORBIDDEN", `${tool.name} needs the ${tool.scope} scope; the credential has ${acting.scope}.`, {
          required_scope: tool.scope,
          scope: acting.scope,
        });
      }
      if (tool.mutates) {
        const account = getAccount(deps, acting.accountId);
        if (account.readOnly) throw new ApiError("ACCOUNT_READ_ONLY", "The account is read-only; reads still work.", { read_only: true });
      }
      const result = (await tool.run(deps, acting, args)) as Record<string, unknown>;
      const text = JSON.stringify(result, null, 2);
      answered += text.length;
      return { content: [{ type: "text", text }], structuredContent: result };
    } catch (e) {
      if (e instanceof ApiError) return toolError(e);
      deps.log.error("mcp tool failed", { tool: tool.name, error: e instanceof Error ? { message: e.message, stack: e.stack } : String(e) });
      return toolError(new ApiError("INTERNAL"));
    }
  };
  return server;
}
