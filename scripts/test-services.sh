#!/usr/bin/env bash
# Install (when missing) and start the real services the test suite needs, then write
# their addresses to .test-services/env. Idempotent: services already running are reused.
#
#   scripts/test-services.sh start   # install + start, write .test-services/env
#   scripts/test-services.sh stop    # stop what this script started
#
# PostgreSQL runs as its own cluster on 127.0.0.1:55432 (trust auth, test-only data dir),
# Redis on 127.0.0.1:56379 without persistence. Nothing listens beyond loopback.
# Also installs what other tests need when missing: tmux, git, node/npm, chromium.
# Docker (Debian's docker.io, plus debootstrap for the sandbox image's offline build) is
# started as a plain dockerd when no engine answers (no systemd needed), and the sandbox
# image is built once with `beamclaw sandbox build` (offline, ~2 min; skipped when Docker
# already holds the current one), so no test waits for it.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
STATE="$ROOT/.test-services"
PG_PORT="${BEAMCLAW_TEST_PG_PORT:-55432}"
REDIS_PORT="${BEAMCLAW_TEST_REDIS_PORT:-56379}"
PG_DIR="/tmp/beamclaw-test-pg-$PG_PORT"
mkdir -p "$STATE"

log() { printf '[services] %s\n' "$*" >&2; }

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

apt_updated=0
apt_install() {
  if [ $apt_updated -eq 0 ]; then
    log "apt-get update"
    $SUDO apt-get update -qq >/dev/null
    apt_updated=1
  fi
  log "apt-get install $*"
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

pg_bin() {
  ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1
}

ensure_packages() {
  local missing=()
  [ -n "$(pg_bin)" ] && [ -x "$(pg_bin)/initdb" ] || missing+=(postgresql)
  command -v redis-server >/dev/null || missing+=(redis-server)
  command -v tmux >/dev/null || missing+=(tmux)
  command -v git >/dev/null || missing+=(git)
  command -v node >/dev/null || missing+=(nodejs npm)
  # the web page's browser tests (tests/integration/test_web_ui.py) drive Debian's
  # Chromium through Playwright; Playwright cannot download its own browsers here
  command -v chromium >/dev/null || command -v chromium-browser >/dev/null || missing+=(chromium)
  command -v dockerd >/dev/null || missing+=(docker.io)
  command -v debootstrap >/dev/null || [ -x /usr/sbin/debootstrap ] || missing+=(debootstrap)
  if [ ${#missing[@]} -gt 0 ]; then apt_install "${missing[@]}"; fi
}

as_postgres() {
  if [ "$(id -u)" -eq 0 ]; then su postgres -s /bin/sh -c "$*"; else sh -c "$*"; fi
}

start_postgres() {
  local bin; bin="$(pg_bin)"
  if "$bin/pg_isready" -h 127.0.0.1 -p "$PG_PORT" -q 2>/dev/null; then
    log "PostgreSQL already running on $PG_PORT"; return
  fi
  if [ ! -f "$PG_DIR/PG_VERSION" ]; then
    rm -rf "$PG_DIR"; mkdir -p "$PG_DIR"
    [ "$(id -u)" -eq 0 ] && chown postgres:postgres "$PG_DIR"
    as_postgres "'$bin/initdb' -D '$PG_DIR' -A trust -U postgres --no-sync >/dev/null"
  fi
  as_postgres "'$bin/pg_ctl' -D '$PG_DIR' -w -t 60 -l '$PG_DIR/server.log' \
    -o '-p $PG_PORT -k /tmp -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off -c max_connections=300' start >/dev/null"
  log "PostgreSQL started on 127.0.0.1:$PG_PORT"
}

start_redis() {
  if redis-cli -p "$REDIS_PORT" ping >/dev/null 2>&1; then
    log "Redis already running on $REDIS_PORT"; return
  fi
  redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save '' --appendonly no \
    --daemonize yes --logfile "$STATE/redis.log" --pidfile "$STATE/redis.pid"
  for _ in $(seq 50); do redis-cli -p "$REDIS_PORT" ping >/dev/null 2>&1 && break; sleep 0.1; done
  log "Redis started on 127.0.0.1:$REDIS_PORT"
}

docker_answers() {
  docker version --format '{{.Server.Version}}' >/dev/null 2>&1
}

start_docker() {
  if docker_answers; then
    log "Docker already running"; return
  fi
  if [ "$(id -u)" -ne 0 ]; then
    log "Docker does not answer and starting dockerd needs root: start it (sudo dockerd &)"
    return
  fi
  nohup dockerd >"$STATE/dockerd.log" 2>&1 &
  echo $! >"$STATE/dockerd.pid"
  for _ in $(seq 150); do docker_answers && break; sleep 0.2; done
  if docker_answers; then log "Docker started (log: $STATE/dockerd.log)"
  else log "dockerd did not answer within 30 s: see $STATE/dockerd.log"; fi
}

build_sandbox_image() {
  local cli="$ROOT/.venv/bin/beamclaw"
  if ! docker_answers || [ ! -x "$cli" ]; then return; fi
  # a private home: the image is the default one, whatever the developer's beamclaw.toml says
  if env -u BEAMCLAW_CONFIG BEAMCLAW_HOME="$STATE/sandbox-home" "$cli" sandbox build \
      >"$STATE/sandbox-build.log" 2>&1; then
    log "sandbox image: $(tail -n 1 "$STATE/sandbox-build.log")"
  else
    log "sandbox image build failed (the tests will say why): see $STATE/sandbox-build.log"
  fi
}

write_env() {
  cat > "$STATE/env" <<ENV
BEAMCLAW_TEST_POSTGRES_URL=postgresql://postgres@127.0.0.1:$PG_PORT/postgres
BEAMCLAW_TEST_REDIS_URL=redis://127.0.0.1:$REDIS_PORT/0
ENV
  log "wrote $STATE/env"
}

case "${1:-start}" in
  start)
    ensure_packages
    start_postgres
    start_redis
    start_docker
    build_sandbox_image
    write_env
    ;;
  stop)
    bin="$(pg_bin)"
    [ -f "$PG_DIR/postmaster.pid" ] && as_postgres "'$bin/pg_ctl' -D '$PG_DIR' -m fast stop >/dev/null" || true
    redis-cli -p "$REDIS_PORT" shutdown nosave >/dev/null 2>&1 || true
    if [ -f "$STATE/dockerd.pid" ]; then
      kill "$(cat "$STATE/dockerd.pid")" 2>/dev/null || true
      rm -f "$STATE/dockerd.pid"
    fi
    ;;
  *) echo "usage: $0 start|stop" >&2; exit 2 ;;
esac
