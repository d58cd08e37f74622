#!/bin/sh
# install-deps.sh installs what the integration tests need on a Debian host:
# WordPress (Debian's package, /usr/share/wordpress: 6.1, the oldest release
# mailsvc supports), the current WordPress (7.1, from Debian unstable's
# wordpress package, unpacked into /opt/wordpress-7.1 without touching the
# system's packages; see install_wordpress_current), the PHP CLI with the
# extensions WordPress uses, Debian's chromium (the admin screens' browser tests),
# Postfix (BenchmarkAdaptiveConcurrency runs a private instance of it beside the
# service; the system's own stays unconfigured) and a running MariaDB on
# 127.0.0.1:3306; and the bridge's PHP linter and unit-test runner.
#
# It is idempotent and non-interactive: apt-get update runs only when a
# package is missing, /opt/wordpress-7.1 is unpacked only when it is not
# there yet, and MariaDB is started only when it does not answer.
# Run it as root (CI does) or through sudo.
set -eu

export DEBIAN_FRONTEND=noninteractive

PACKAGES="chromium wordpress nginx php8.2-fpm php8.2-cli php8.2-mysql php8.2-xml php8.2-mbstring php8.2-curl php8.2-gd php8.2-intl mariadb-server mariadb-client postfix"

log() { printf 'install-deps: %s\n' "$*" >&2; }

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
	if command -v sudo >/dev/null 2>&1; then
		SUDO="sudo -E"
	fi
fi

# The package test (test/dist): systemd-analyze verifies the unit the .deb
# ships, and the package's maintainer scripts use adduser.
PACKAGES="$PACKAGES systemd adduser"

# The bridge's PHP (make lint-php, make test-php): PHP_CodeSniffer with the
# rule set adapters/wordpress/bridge/phpcs.xml.dist, PHPUnit for its unit
# tests, and gettext's xgettext/msgfmt for its translation template.
PACKAGES="$PACKAGES php-codesniffer phpunit gettext"

# The current WordPress is fetched from Debian unstable with apt-get against
# a private sources list signed by the Debian archive keys.
PACKAGES="$PACKAGES debian-archive-keyring"

missing=""
for p in $PACKAGES; do
	status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
	case "$status" in
	*"install ok installed"*) ;;
	*) missing="$missing $p" ;;
	esac
done

if [ -n "$missing" ]; then
	log "installing:$missing"
	$SUDO apt-get -o DPkg::Lock::Timeout=600 update -q
	# Postfix installed unconfigured: no system mail server on port 25.
	echo "postfix postfix/main_mailer_type select No configuration" | $SUDO debconf-set-selections
	# Debian's wordpress package recommends apache2 and a full LAMP stack;
	# the tests need only the PHP CLI.
	# shellcheck disable=SC2086
	$SUDO apt-get -o DPkg::Lock::Timeout=600 install -y -q --no-install-recommends $missing
else
	log "packages already installed"
fi

# WP_CURRENT_SERIES is the newest WordPress release mailsvc supports; CI runs
# the WordPress suites against it (make test-wp-current) beside Debian 12's
# 6.1. WP_CURRENT_DIR is what MAILSVC_TEST_WORDPRESS_DIR names then.
WP_CURRENT_SERIES=7.1
WP_CURRENT_DIR=/opt/wordpress-$WP_CURRENT_SERIES
# Debian's wordpress replaces the libraries WordPress bundles with symlinks
# into these packages (its Depends); they are unpacked beside it and the
# links replaced by copies of their targets, so the tree stands alone.
WP_CURRENT_LIBS="libphp-phpmailer php-getid3 libjs-cropper libjs-jquery-ui libjs-lodash libjs-underscore"

# install_wordpress_current unpacks Debian unstable's wordpress package
# (WP_CURRENT_SERIES.x) and the packages its symlinks point into, with
# apt-get download and dpkg-deb -x: nothing is installed, the system's
# sources and packages stay as they are. The libraries come from unstable
# too (all of them run on Debian 12's PHP 8.2). Done once: the stamp file
# records the packages it was made from.
install_wordpress_current() {
	stamp="$WP_CURRENT_DIR/.mailsvc-packages"
	if [ -f "$stamp" ] && [ -f "$WP_CURRENT_DIR/wp-includes/version.php" ]; then
		log "WordPress $WP_CURRENT_SERIES already in $WP_CURRENT_DIR"
		return 0
	fi
	log "fetching WordPress $WP_CURRENT_SERIES from Debian unstable into $WP_CURRENT_DIR"
	work=$(mktemp -d)
	mkdir -p "$work/apt/lists/partial" "$work/apt/cache/archives/partial" "$work/debs" "$work/root"
	echo 'deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian unstable main' >"$work/apt/sources.list"
	: >"$work/apt/status"
	set -- -q -o Dir::Etc::SourceList="$work/apt/sources.list" -o Dir::Etc::SourceParts=/dev/null \
		-o Dir::State::Lists="$work/apt/lists" -o Dir::State::status="$work/apt/status" \
		-o Dir::Cache="$work/apt/cache" -o APT::Sandbox::User="$(id -un)"
	apt-get "$@" update >/dev/null
	version=$(apt-cache "$@" show wordpress | sed -n "s/^Version: \($WP_CURRENT_SERIES\.[^ ]*\)$/\1/p" | head -n 1)
	if [ -z "$version" ]; then
		log "Debian unstable has no wordpress $WP_CURRENT_SERIES.x any more: raise WP_CURRENT_SERIES (and the README's supported range)"
		rm -rf "$work"
		return 1
	fi
	# shellcheck disable=SC2086
	(cd "$work/debs" && apt-get "$@" download "wordpress=$version" $WP_CURRENT_LIBS >/dev/null)
	for deb in "$work"/debs/*.deb; do
		dpkg-deb -x "$deb" "$work/root"
	done
	wp="$work/root/usr/share/wordpress"
	# Relative links resolve inside the unpacked root, where the libraries
	# sit at the paths Debian installs them to; copy each target in place.
	# Of the absolute links, the CA bundle stays a link to the system's
	# (ca-certificates), and .htaccess (Apache's, in /etc/wordpress) goes.
	find "$wp" -type l | while IFS= read -r link; do
		target=$(readlink "$link")
		case "$target" in
		/etc/ssl/*) continue ;;
		/*)
			rm -f "$link"
			continue
			;;
		esac
		if [ ! -e "$link" ]; then
			log "$link points to $target, which no unpacked package provides"
			exit 1
		fi
		cp -RL "$link" "$link.resolved"
		rm -f "$link"
		mv "$link.resolved" "$link"
	done
	for deb in "$work"/debs/*.deb; do
		dpkg-deb -f "$deb" Package Version | paste -sd' '
	done >"$wp/.mailsvc-packages"
	$SUDO rm -rf "$WP_CURRENT_DIR.new"
	$SUDO mkdir -p "$(dirname "$WP_CURRENT_DIR")"
	$SUDO cp -R "$wp" "$WP_CURRENT_DIR.new"
	$SUDO rm -rf "$WP_CURRENT_DIR"
	$SUDO mv "$WP_CURRENT_DIR.new" "$WP_CURRENT_DIR"
	rm -rf "$work"
	log "WordPress $version in $WP_CURRENT_DIR"
}

install_wordpress_current

mariadb_up() {
	mariadb-admin --protocol=tcp -h 127.0.0.1 -P 3306 -u root --connect-timeout=2 ping >/dev/null 2>&1
}

if mariadb_up; then
	log "MariaDB answers on 127.0.0.1:3306"
	exit 0
fi

log "starting MariaDB"
$SUDO mkdir -p /run/mysqld
$SUDO chown mysql:mysql /run/mysqld 2>/dev/null || true
$SUDO start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd -- --user=mysql --bind-address=127.0.0.1 --port=3306

i=0
while [ "$i" -lt 60 ]; do
	if mariadb_up; then
		log "MariaDB answers on 127.0.0.1:3306"
		exit 0
	fi
	i=$((i + 1))
	sleep 1
done
log "MariaDB did not answer on 127.0.0.1:3306 within 60 s"
exit 1
