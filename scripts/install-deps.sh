#!/bin/sh
# install-deps.sh installs what the integration tests need on a Debian host:
# WordPress (Debian's package, /usr/share/wordpress), the PHP CLI with the
# extensions WordPress uses, Debian's chromium (the admin screens' browser tests),
# Postfix (BenchmarkAdaptiveConcurrency runs a private instance of it beside the
# service; the system's own stays unconfigured) and a running MariaDB on
# 127.0.0.1:3306.
#
# It is idempotent and non-interactive: apt-get update runs only when a
# package is missing, and MariaDB is started only when it does not answer.
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
