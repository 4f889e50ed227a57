#!/usr/bin/env bash
# The README's test line runs this: install what the suite needs from Debian when it is
# missing (browser tests, ACME, SMTP tools), then run the whole suite with bun test.
set -uo pipefail
cd "$(dirname "$0")/.."

need=()
command -v chromium >/dev/null 2>&1 || need+=(chromium)
command -v pebble >/dev/null 2>&1 || need+=(pebble)
command -v git >/dev/null 2>&1 || need+=(git)
command -v swaks >/dev/null 2>&1 || need+=(swaks)
perl -MNet::SSLeay -e1 >/dev/null 2>&1 || need+=(libnet-ssleay-perl) # swaks --tls
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "test.sh: installing missing Debian packages: ${need[*]}" >&2
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}") >&2 \
      || echo "test.sh: could not install ${need[*]}; tests that need them will fail" >&2
  else
    echo "test.sh: missing ${need[*]} and cannot apt-get install (not root); tests that need them will fail" >&2
  fi
fi

echo "test.sh: type-checking" >&2
./node_modules/.bin/tsc --noEmit -p . || exit 1

# Formatting is part of the suite (Biome, pinned; biome.json): `npm run format` fixes it.
echo "test.sh: checking formatting" >&2
./node_modules/.bin/biome format . >/dev/null 2>&1 \
  || { echo "test.sh: files are not formatted: run npm run format (npm run format:check lists them)" >&2; exit 1; }

# Integration tests start real servers (argon2id, SMTP, Chromium): give each test 30 s on a
# busy 2-core machine instead of bun's 5 s default (bunfig.toml cannot set it).
report=$(mktemp --suffix=.xml)
./node_modules/.bin/bun test --timeout 30000 --reporter=junit --reporter-outfile="$report" "$@"
rc=$?
[ "$rc" = 0 ] || ./node_modules/.bin/bun run scripts/test-failures.ts "$report"
rm -f "$report"
exit "$rc"
