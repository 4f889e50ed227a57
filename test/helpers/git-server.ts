// A real git server on loopback for the git-sync tests: bare repositories served over git's
// smart HTTP protocol by `git http-backend` (the CGI program git ships), behind a small CGI
// wrapper (https://git-scm.com/docs/git-http-backend). Optional basic auth per server; the
// system `git` CLI plays "the other side" (commits, pushes, force pushes).
import { mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface GitServer {
  url: string;
  root: string;
  /** Create an empty bare repository `<name>.git` (branch main) and return its clone URL. */
  createRepo(name: string): string;
  /** Bytes the server sent and received since the start (the bench reads these). */
  traffic: { sent: number; received: number };
  /** Change the accepted credential (null: no auth). */
  setCredential(cred: { user: string; password: string } | null): void;
  /** While true, every request hangs without answering (a remote that hangs). */
  hang: boolean;
  stop(): Promise<void>;
}

export function startGitServer(
  opts: {
    credential?: { user: string; password: string };
    /** Decides every request instead of the one credential (the GitHub stand-in's installation tokens). */
    authorize?: (user: string, password: string, path: string) => boolean;
    /** Serve HTTPS with this certificate (a private git server; Pier trusts it with --git-ca-root). */
    tls?: { cert: string; key: string };
  } = {},
): GitServer {
  const root = mkdtempSync(join(tmpdir(), "pier-git-"));
  let credential = opts.credential ?? null;
  const traffic = { sent: 0, received: 0 };
  const state = { hang: false };
  const hung: (() => void)[] = [];

  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    idleTimeout: 0,
    ...(opts.tls ? { tls: opts.tls } : {}),
    async fetch(req) {
      if (state.hang) return new Promise<Response>((resolve) => hung.push(() => resolve(new Response("gone", { status: 503 }))));
      const url = new URL(req.url);
      let remoteUser = "";
      if (opts.authorize) {
        const header = req.headers.get("authorization") ?? "";
        const [user, password] = header.startsWith("Basic ") ? Buffer.from(header.slice(6), "base64").toString().split(":") : ["", ""];
        if (!opts.authorize(user ?? "", password ?? "", decodeURIComponent(url.pathname)))
          return new Response("auth required", { status: 401, headers: { "www-authenticate": 'Basic realm="git"' } });
        remoteUser = user || "anonymous";
      } else if (credential) {
        const header = req.headers.get("authorization") ?? "";
        const [user, password] = header.startsWith("Basic ") ? Buffer.from(header.slice(6), "base64").toString().split(":") : [];
        if (user !== credential.user || password !== credential.password)
          return new Response("auth required", { status: 401, headers: { "www-authenticate": 'Basic realm="git"' } });
        remoteUser = user!;
      }
      const body = new Uint8Array(await req.arrayBuffer());
      traffic.received += body.length;
      const env: Record<string, string> = {
        PATH: process.env.PATH ?? "/usr/bin:/bin",
        GIT_PROJECT_ROOT: root,
        GIT_HTTP_EXPORT_ALL: "1",
        PATH_INFO: decodeURIComponent(url.pathname),
        QUERY_STRING: url.search.slice(1),
        REQUEST_METHOD: req.method,
        CONTENT_TYPE: req.headers.get("content-type") ?? "",
        CONTENT_LENGTH: String(body.length),
        REMOTE_USER: remoteUser,
        REMOTE_ADDR: "127.0.0.1",
        // Pushes over smart HTTP need an authenticated user unless receive-pack is enabled.
        GIT_CONFIG_COUNT: "1",
        GIT_CONFIG_KEY_0: "http.receivepack",
        GIT_CONFIG_VALUE_0: "true",
      };
      if (req.headers.get("content-encoding")) env.HTTP_CONTENT_ENCODING = req.headers.get("content-encoding")!;
      if (req.headers.get("git-protocol")) env.GIT_PROTOCOL = req.headers.get("git-protocol")!;
      const proc = Bun.spawn(["git", "http-backend"], { env, stdin: body, stdout: "pipe", stderr: "ignore" });
      const out = new Uint8Array(await new Response(proc.stdout).arrayBuffer());
      await proc.exited;
      // CGI answer: headers, a blank line, the body.
      let split = -1;
      for (let i = 0; i + 3 < out.length; i++) {
        if (out[i] === 13 && out[i + 1] === 10 && out[i + 2] === 13 && out[i + 3] === 10) {
          split = i;
          break;
        }
      }
      let headerEnd = split + 4;
      if (split < 0) {
        for (let i = 0; i + 1 < out.length; i++) {
          if (out[i] === 10 && out[i + 1] === 10) {
            split = i;
            headerEnd = i + 2;
            break;
          }
        }
      }
      if (split < 0) return new Response("bad CGI answer", { status: 500 });
      const headers = new Headers();
      let status = 200;
      for (const line of new TextDecoder().decode(out.subarray(0, split)).split(/\r?\n/)) {
        const i = line.indexOf(":");
        if (i < 0) continue;
        const name = line.slice(0, i).trim();
        const value = line.slice(i + 1).trim();
        if (name.toLowerCase() === "status") status = Number.parseInt(value, 10);
        else headers.append(name, value);
      }
      const payload = out.subarray(headerEnd);
      traffic.sent += payload.length;
      return new Response(payload, { status, headers });
    },
  });

  const origin = `${opts.tls ? "https" : "http"}://127.0.0.1:${server.port}`;
  return {
    url: origin,
    root,
    traffic,
    get hang() {
      return state.hang;
    },
    set hang(v: boolean) {
      state.hang = v;
      if (!v) for (const release of hung.splice(0)) release();
    },
    setCredential(c) {
      credential = c;
    },
    createRepo(name) {
      const dir = join(root, `${name}.git`);
      mkdirSync(dir, { recursive: true });
      const r = Bun.spawnSync(["git", "init", "--bare", "--quiet", "--initial-branch=main", dir], { env: gitEnv(root) });
      if (r.exitCode !== 0) throw new Error(`git init failed: ${r.stderr.toString()}`);
      return `${origin}/${name}.git`;
    },
    async stop() {
      state.hang = false;
      for (const release of hung.splice(0)) release();
      server.stop(true);
      rmSync(root, { recursive: true, force: true });
    },
  };
}

const gitEnv = (home: string) => ({
  PATH: process.env.PATH ?? "/usr/bin:/bin",
  HOME: home,
  GIT_AUTHOR_NAME: "Other Side",
  GIT_AUTHOR_EMAIL: "other@example.com",
  GIT_COMMITTER_NAME: "Other Side",
  GIT_COMMITTER_EMAIL: "other@example.com",
  GIT_TERMINAL_PROMPT: "0",
});

/**
 * Run the system git in a directory; throws with git's message on failure. Asynchronous: the
 * git server runs in this same process, so a blocking spawn would never get an answer.
 */
export async function git(cwd: string, ...args: string[]): Promise<string> {
  const proc = Bun.spawn(["git", ...args], { cwd, env: gitEnv(cwd), stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  if (code !== 0) throw new Error(`git ${args.join(" ")} failed: ${err}`);
  return out.trim();
}

export interface WorkClone {
  dir: string;
  write(path: string, text: string | Uint8Array): void;
  remove(path: string): void;
  commitAndPush(msg: string, force?: boolean): Promise<string>;
  /** Make the next commit replace history: a new root commit with the current files. */
  orphan(): Promise<void>;
  pull(): Promise<void>;
  read(path: string): string;
  cleanup(): void;
}

/** A working clone of a repository on the "other side", with helpers to change and push. */
export async function workClone(url: string): Promise<WorkClone> {
  const dir = mkdtempSync(join(tmpdir(), "pier-gitwork-"));
  await git(dir, "init", "--quiet", "--initial-branch=main");
  await git(dir, "remote", "add", "origin", url);
  await git(dir, "fetch", "--quiet", "origin");
  const hasMain = (await git(dir, "branch", "-r")).includes("origin/main");
  if (hasMain) await git(dir, "checkout", "--quiet", "-B", "main", "origin/main");
  return {
    dir,
    write(path, text) {
      const full = join(dir, path);
      mkdirSync(join(full, ".."), { recursive: true });
      writeFileSync(full, text);
    },
    remove(path) {
      rmSync(join(dir, path), { force: true });
    },
    read(path) {
      return readFileSync(join(dir, path), "utf8");
    },
    async commitAndPush(msg, force = false) {
      await git(dir, "add", "-A");
      await git(dir, "commit", "--quiet", "--allow-empty", "-m", msg);
      await git(dir, "push", "--quiet", ...(force ? ["--force"] : []), "origin", "HEAD:main");
      return git(dir, "rev-parse", "HEAD");
    },
    async orphan() {
      await git(dir, "checkout", "--quiet", "--orphan", "rewritten");
    },
    async pull() {
      await git(dir, "fetch", "--quiet", "origin");
      await git(dir, "checkout", "--quiet", "-B", "main", "origin/main");
      await git(dir, "reset", "--quiet", "--hard", "origin/main");
    },
    cleanup() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
