// A repository URL is typed by a user and fetched by Pier's server: it must not reach what only
// the server reaches (loopback, the private network, link-local metadata services), and nothing
// a remote answers is copied into github_sync.error, where the user reads it.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { lookup } from "node:dns/promises";
import { hostname } from "node:os";
import { isPrivateAddress, pinnedRequest } from "../../src/features/gitsync/addresses";
import { startTestPier, type TestPier, type TestUser } from "../helpers/pier";
import { newBucket } from "../helpers/uploads";

let strict: TestPier;
let open: TestPier;
let rebound: TestPier;
let reboundUser: TestUser;
let strictUser: TestUser;
let openUser: TestUser;
const SECRET = "INTERNAL-ADMIN-TOKEN=abc123";
// An internal service only the server can reach.
const internal = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response(`${SECRET} (only reachable from the server)`) });
// A service on the address the system resolves this machine's name to: what a request that
// resolved the name again would reach.
const localAddress = (await lookup(hostname())).address;
const localRequests: string[] = [];
const local = Bun.serve({
  hostname: localAddress,
  port: 0,
  fetch: (req) => {
    localRequests.push(req.url);
    return new Response(SECRET);
  },
});

beforeAll(async () => {
  strict = await startTestPier({ gitAllowHttp: "on" });
  strictUser = await strict.user({ plan: "pro" });
  open = await startTestPier({ gitAllowHttp: "on", gitAllowPrivateNetwork: "on" });
  openUser = await open.user({ plan: "pro" });
  // DNS rebinding: the name answers a public address first (4000::/3 is unicast to the check but
  // routed nowhere), and a local one on every later question.
  let asked = 0;
  rebound = await startTestPier({ gitAllowHttp: "on", gitTimeout: 1 }, { gitLookup: async () => (asked++ === 0 ? ["4000::1"] : [localAddress]) });
  reboundUser = await rebound.user({ plan: "pro" });
});
afterAll(async () => {
  await strict?.stop();
  await open?.stop();
  await rebound?.stop();
  internal.stop(true);
  local.stop(true);
});

const connect = async (t: TestPier, user: TestUser, url: string) => {
  const b = await newBucket(t, user.key, "ssrf");
  const r = await t.api("POST", `/api/v1/buckets/${b}/github_sync`, { key: user.key, body: { direction: "import", repository_url: url } });
  return { b, r };
};
const syncOf = async (t: TestPier, user: TestUser, b: string) =>
  (await t.api("GET", `/api/v1/buckets/${b}/github_sync`, { key: user.key })).body.data.github_sync;

test("loopback, private and link-local address literals are refused when connecting (422 GIT_REMOTE_REFUSED), nothing is saved", async () => {
  for (const url of [
    `http://127.0.0.1:${internal.port}/anything`,
    "https://127.0.0.1:1/x",
    "https://localhost/x.git",
    "https://10.1.2.3/x.git",
    "https://169.254.169.254/latest/meta-data",
    "https://[::1]/x.git",
    "https://[::ffff:127.0.0.1]/x.git",
    "https://2130706433/x.git", // 127.0.0.1 as one number
  ]) {
    const { b, r } = await connect(strict, strictUser, url);
    expect(r.status, url).toBe(422);
    expect(r.body.error.code).toBe("GIT_REMOTE_REFUSED");
    expect(await syncOf(strict, strictUser, b)).toBeNull();
  }
});

test("a name that resolves to a private address is refused at the sync: private_address_refused, nothing fetched", async () => {
  const { b, r } = await connect(strict, strictUser, `http://${hostname()}:${internal.port}/anything.git`);
  expect(r.status).toBe(202);
  await strict.pier.runner.drain();
  const s = await syncOf(strict, strictUser, b);
  expect(s.state).toBe("error");
  expect(s.error.code).toBe("private_address_refused");
});

test("a name that answers a public address to the check and a local one afterwards: the connection goes to the address checked, never to the local one", async () => {
  const { b, r } = await connect(rebound, reboundUser, `http://${hostname()}:${local.port}/repo.git`);
  expect(r.status).toBe(202);
  await rebound.pier.runner.drain();
  const s = await syncOf(rebound, reboundUser, b);
  expect(localRequests).toEqual([]);
  expect(s.state).toBe("error");
  // The checked address answers nothing within the deadline (or is unreachable from here).
  expect(["remote_timeout", "remote_unreachable"]).toContain(s.error.code);
});

test("a pinned request names the checked address in its URL and keeps the host's name for Host and TLS", () => {
  expect(pinnedRequest("https://git.example.com/a/b.git/info/refs?service=git-upload-pack", "93.184.216.34")).toEqual({
    url: "https://93.184.216.34/a/b.git/info/refs?service=git-upload-pack",
    host: "git.example.com",
    serverName: "git.example.com",
  });
  expect(pinnedRequest("http://git.example.com.:8080/r.git", "2606:4700::1111")).toEqual({
    url: "http://[2606:4700::1111]:8080/r.git",
    host: "git.example.com.:8080",
    serverName: null,
  });
  expect(pinnedRequest("https://93.184.216.34/r.git", "93.184.216.34")).toEqual({ url: "https://93.184.216.34/r.git", host: null, serverName: null });
});

test("with --git-allow-private-network on, a URL that is not a git server stops with not_a_git_repository; its answer is not in the error", async () => {
  const { b, r } = await connect(open, openUser, `http://127.0.0.1:${internal.port}/anything`);
  expect(r.status).toBe(202);
  await open.pier.runner.drain();
  const s = await syncOf(open, openUser, b);
  expect(s.state).toBe("error");
  expect(s.error.code).toBe("not_a_git_repository");
  expect(JSON.stringify(s)).not.toContain("INTERNAL-ADMIN-TOKEN");
});

test("address classification", () => {
  for (const a of [
    "127.0.0.1",
    "10.0.0.1",
    "172.31.255.255",
    "192.168.1.1",
    "169.254.169.254",
    "100.64.0.1",
    "0.0.0.0",
    "::1",
    "::",
    "fd00::1",
    "fe80::1",
    "::ffff:10.0.0.1",
    "64:ff9b::7f00:1",
    "2002:a00:1::",
    "fe80::1%eth0",
  ])
    expect(isPrivateAddress(a), a).toBe(true);
  for (const a of ["8.8.8.8", "140.82.112.3", "172.32.0.1", "2606:4700::1111", "::ffff:8.8.8.8", "64:ff9b::808:808", "2002:808:808::1"])
    expect(isPrivateAddress(a), a).toBe(false);
});
