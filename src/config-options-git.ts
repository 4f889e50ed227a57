// The git sync options, any host and the GitHub App (docs/git-sync.md). Their place in the
// README's table is where src/config-options.ts spreads them.
import type { Option } from "./config-options";
import { absoluteUrl, oneOf, optionalStr, positiveInt } from "./config-values";

export const gitSyncOptions: Option[] = [
  {
    key: "gitSync",
    name: "git-sync",
    default: "on",
    help: "Git sync of buckets with repositories on any git host (on or off; off makes every bucket's github_sync_setup say feature_disabled).",
    parse: oneOf("on", "off"),
  },
  {
    key: "gitAllowHttp",
    name: "git-allow-http",
    default: "off",
    help: "Allow plain http:// git remotes (a git server on the same host or private network). Default: https:// only.",
    parse: oneOf("on", "off"),
  },
  {
    key: "gitCaRoot",
    name: "git-ca-root",
    default: "",
    help: "PEM file of an extra root CA trusted for git remotes (a private git server).",
    parse: optionalStr,
  },
  {
    key: "gitPollInterval",
    name: "git-poll-interval",
    default: "60",
    help: "Seconds between checks of a connected branch without a webhook; doubles while nothing changes, never past 600.",
    parse: positiveInt,
  },
  {
    key: "gitMaxRepositoryMb",
    name: "git-max-repository-mb",
    default: "1024",
    help: "Largest repository (MiB transferred by one fetch, and unpacked by one sync) git sync takes in; bigger stops the sync with repository_too_large. Files are at most 100 MiB, or this when smaller (file_too_large).",
    parse: positiveInt,
  },
  {
    key: "gitTimeout",
    name: "git-timeout",
    default: "30",
    help: "Seconds one request to a git server may take (answer and body) before the sync stops with remote_timeout and retries later.",
    parse: positiveInt,
  },
];

export const githubAppOptions: Option[] = [
  {
    key: "githubAppId",
    name: "github-app-id",
    default: "",
    help: "GitHub App ID for git sync with GitHub (/docs/guides/git-sync#github-app). With the other --github-app-* options it turns on installing the app from a bucket's Git page.",
    parse: optionalStr,
  },
  {
    key: "githubAppPrivateKeyFile",
    name: "github-app-private-key-file",
    default: "",
    help: "PEM file of the GitHub App's private key (signs the app's JWTs; never logged or shown).",
    parse: optionalStr,
  },
  {
    key: "githubAppWebhookSecret",
    name: "github-app-webhook-secret",
    default: "",
    help: "The GitHub App's webhook secret (X-Hub-Signature-256 of its deliveries). Or --github-app-webhook-secret-file.",
    parse: optionalStr,
  },
  {
    key: "githubAppWebhookSecretFile",
    name: "github-app-webhook-secret-file",
    default: "",
    help: "File holding the GitHub App's webhook secret (instead of --github-app-webhook-secret).",
    parse: optionalStr,
  },
  {
    key: "githubAppSlug",
    name: "github-app-slug",
    default: "",
    help: "The GitHub App's URL name (github.com/apps/<slug>): the Install on GitHub button goes to its installation page.",
    parse: optionalStr,
  },
  {
    key: "githubAppClientId",
    name: "github-app-client-id",
    default: "",
    help: "The GitHub App's client ID: proves, through user authorization during installation, that the person linking an installation can see it.",
    parse: optionalStr,
  },
  {
    key: "githubAppClientSecret",
    name: "github-app-client-secret",
    default: "",
    help: "The GitHub App's client secret (see --github-app-client-id). Or --github-app-client-secret-file.",
    parse: optionalStr,
  },
  {
    key: "githubAppClientSecretFile",
    name: "github-app-client-secret-file",
    default: "",
    help: "File holding the GitHub App's client secret (instead of --github-app-client-secret).",
    parse: optionalStr,
  },
  {
    key: "githubApiUrl",
    name: "github-api-url",
    default: "https://api.github.com",
    help: "GitHub's REST API. GitHub Enterprise Server: https://HOST/api/v3.",
    parse: (raw: string, name: string) => absoluteUrl(raw, name) ?? "https://api.github.com",
  },
  {
    key: "githubUrl",
    name: "github-url",
    default: "",
    help: "GitHub's web address (installation and authorization pages). Default: derived from --github-api-url (https://github.com, or https://HOST for https://HOST/api/v3).",
    parse: absoluteUrl,
  },
];
