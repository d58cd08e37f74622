# mailsvc — build, run, test, bench, lint.
GO       ?= go
BIN      := bin/mailsvc
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS  := -X github.com/mailsvc/mailsvc/cmd/mailsvc/cli.Version=$(VERSION)
STATICCHECK_VERSION ?= v0.8.2

.PHONY: build run test test-wp-current test-php test-short screenshots bench bench-compare lint lint-php pot fuzz dist clean

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/mailsvc

## run: build and serve on the embedded SQLite default (./data), printing how to log in and the screens' address.
run: build
	./$(BIN) serve

## test: every package, with MariaDB and real WordPress where present (CI installs them),
## WordPress being Debian 12's 6.1 (the oldest supported); then test-wp-current and test-php.
test:
	$(GO) test -count=1 -timeout 30m ./...
	$(MAKE) --no-print-directory test-wp-current
	$(MAKE) --no-print-directory test-php

# BRIDGE is the wp_mail() bridge's directory: its loader, its folder of
# PHP files, the PHPUnit tests and the phpcs rule set.
BRIDGE := adapters/wordpress/bridge

## test-php: the bridge's PHP unit tests (Debian's phpunit; scripts/install-deps.sh).
test-php:
	@if command -v phpunit >/dev/null 2>&1; then \
	  phpunit --configuration $(BRIDGE)/phpunit.xml.dist; \
	elif [ -n "$$CI" ]; then \
	  echo "test-php: no phpunit (scripts/install-deps.sh installs it)"; exit 1; \
	else \
	  echo "test-php: skipped, no phpunit; run scripts/install-deps.sh"; \
	fi

# WP_CURRENT_DIR is the newest supported WordPress, 7.1, that
# scripts/install-deps.sh unpacks from Debian unstable's package.
WP_CURRENT_DIR ?= /opt/wordpress-7.1/
# WP_PACKAGES are the packages whose tests run WordPress: those importing
# test/wpsite, test/wpsite itself, and wpconfig (it parses the
# wp-config-sample.php of the WordPress under test).
WP_PACKAGES = $(shell $(GO) list -f '{{.ImportPath}}{{range .TestImports}} {{.}}{{end}}{{range .XTestImports}} {{.}}{{end}}' ./... | \
	awk '/ github.com\/mailsvc\/mailsvc\/test\/wpsite( |$$)/ {print $$1}') \
	./test/wpsite ./adapters/wordpress/wpconfig

## test-wp-current: the WordPress suites again, on the newest supported WordPress
## (MAILSVC_TEST_WORDPRESS_DIR=$(WP_CURRENT_DIR)); without it, a failure in CI, a note elsewhere.
test-wp-current:
	@if [ -f $(WP_CURRENT_DIR)wp-settings.php ]; then \
	  echo "== WordPress suites on $(WP_CURRENT_DIR)"; \
	  MAILSVC_TEST_WORDPRESS_DIR=$(WP_CURRENT_DIR) $(GO) test -count=1 -timeout 30m $(WP_PACKAGES); \
	elif [ -n "$$CI" ]; then \
	  echo "test-wp-current: no WordPress in $(WP_CURRENT_DIR) (scripts/install-deps.sh provides it)"; exit 1; \
	else \
	  echo "test-wp-current: skipped, no WordPress in $(WP_CURRENT_DIR); run scripts/install-deps.sh"; \
	fi

## screenshots: each admin screen (the wizard, dashboard, connections, logs, a log, alerts, settings), and
## wp-admin as a site owner sees it (the Mail page, the WordPress Dashboard's notice and widget, the Mail
## menu's count, held mail on the Email logs screen), on WordPress 7.1 at 1280 and 390 px into docs/screenshots/, taken by the browser tests that check them.
screenshots:
	MAILSVC_SCREENSHOTS=$(CURDIR)/docs/screenshots MAILSVC_TEST_WORDPRESS_DIR=$(WP_CURRENT_DIR) \
	  $(GO) test -count=1 -timeout 30m ./test/admin/ -run '^(TestScreensInPeoplesWords|TestTroubleWhereOwnersLook|TestHeldMailOnTheLogsScreen)$$'

## test-short: unit tests only, no external services.
test-short:
	$(GO) test -count=1 -short ./...

## bench: benchmarks that print figures (not pass/fail).
bench:
	$(GO) test -run '^$$' -bench . -benchmem -count=1 -timeout 30m ./...

## bench-compare: BASE and the working tree side by side in one run (alternating), each figure with its ratio.
ROUNDS ?= 2
BENCH ?=
bench-compare:
	@test -n "$(BASE)" || (echo "usage: make bench-compare BASE=<rev> [ROUNDS=2] [BENCH=pkg:pattern,...]"; exit 2)
	$(GO) run ./cmd/benchcompare -base "$(BASE)" -rounds $(ROUNDS) $(if $(BENCH),-bench '$(value BENCH)')

## fuzz: a short run of every fuzz target; the corpus lives in testdata/fuzz.
fuzz:
	@for pkg in $$($(GO) list ./...); do \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg 2>/dev/null | grep '^Fuzz'); do \
	    echo "== $$pkg $$f"; $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime 20s $$pkg || exit 1; \
	  done; \
	done

## dist: static binaries (CGO off), a .deb for each and SHA256SUMS in dist/, for DIST_ARCH.
DIST_ARCH ?= amd64,arm64
dist:
	$(GO) run ./cmd/mkdist -version $(VERSION) -out dist -arch $(DIST_ARCH)

## lint: gofmt, go vet, staticcheck, then lint-php.
lint:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || (gofmt -l $$(git ls-files '*.go'); exit 1)
	$(GO) vet ./...
	$(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) ./...
	$(MAKE) --no-print-directory lint-php

## pot: the bridge's translation template, mailsvc-bridge/languages/mailsvc.pot, from its
## strings (gettext's xgettext; docs/translation.md).
pot:
	xgettext --language=PHP --from-code=UTF-8 --add-comments=translators: --sort-by-file --no-wrap \
	  --keyword=__ --keyword=_e --keyword=esc_html__ --keyword=esc_html_e --keyword=esc_attr__ --keyword=esc_attr_e \
	  --keyword=_n:1,2 --keyword=_x:1,2c --keyword=_nx:1,2,4c \
	  --package-name=mailsvc --msgid-bugs-address=https://github.com/mailsvc/mailsvc/issues \
	  --output=$(BRIDGE)/mailsvc-bridge/languages/mailsvc.pot \
	  $(BRIDGE)/mailsvc-bridge.php $$(ls $(BRIDGE)/mailsvc-bridge/*.php)

## lint-php: php -l on every PHP file of the repository, and phpcs on the bridge
## with its rule set (Debian's php-codesniffer; scripts/install-deps.sh).
lint-php:
	@for f in $$(git ls-files '*.php'); do php -l "$$f" >/dev/null || { php -l "$$f"; exit 1; }; done
	@if command -v phpcs >/dev/null 2>&1; then \
	  phpcs --standard=$(BRIDGE)/phpcs.xml.dist; \
	elif [ -n "$$CI" ]; then \
	  echo "lint-php: no phpcs (scripts/install-deps.sh installs php-codesniffer)"; exit 1; \
	else \
	  echo "lint-php: phpcs skipped, not installed; run scripts/install-deps.sh"; \
	fi

clean:
	rm -rf bin dist
