#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# metrics_auth.sh - flowsketchd --metrics-web-config: /metrics over HTTPS
# with basic auth (and client certificates), in Prometheus'
# exporter-toolkit format, scraped by a real prometheus with credentials.
#
#   NS_RX [flowsketchd --metrics 127.0.0.1:PORT, curl, prometheus]
#
# The oracles are not flowsketchd's: the certificates are openssl's (a CA
# of the test's, a server and two client certificates), the password
# hash is htpasswd's (APR's own bcrypt, not libxcrypt), the TLS clients
# are curl (OpenSSL) and prometheus (Go).  Checks:
#   - plain HTTP to the port gets no HTTP answer (a TLS handshake is
#     required); HTTPS with the test's CA and server name works;
#   - no credentials: 401 with WWW-Authenticate: Basic; a wrong password,
#     an unknown user: 401; the right ones: 200 and the metrics;
#   - a prometheus server scraping with scheme https, basic_auth and
#     tls_config (ca_file, server_name) has up == 1 and flowsketch_
#     series; one with a wrong password has up == 0;
#   - bcrypt ran once per distinct (user, password) pair: the cache
#     answered every repeat, prometheus's scrapes included (the
#     daemon's count at exit, -v);
#   - a flood of new wrong passwords is answered 429 once bcrypt's budget
#     is spent, and meanwhile the cached pair still gets 200;
#   - client_auth_type RequireAndVerifyClientCert: no client certificate
#     or one of another CA is 403, the test CA's with the password 200;
#     min_version TLS13 refuses a TLS 1.2 client;
#   - basic_auth_users alone (plain HTTP): a warning, 401 and 200;
#   - bad files (unknown key, an exporter-toolkit key flowsketchd does not
#     implement, a missing cert file, bad YAML, unsupported values, a bad
#     hash, a key not of the certificate, a user twice, an empty file)
#     exit 1 with one line naming the file, the line and the key, and
#     leave no pins, no state, no socket.
# Output: TAP.
set -u
cd "$(dirname "$0")/../.." || exit 2
. scripts/daemon_test.sh

PORT=9108		# in NS_RX, whose ports are all free
PROM_PORT=9090
NAME=flowsketch.test	# the server certificate's name
PROM_PID=""	# FSD=PATH: another build of the daemon

test_cleanup() {
	fs_daemon_stop "$PROM_PID"
	rm -rf "$PIN_DIR-bad"
}

rx() { fs_in "$NS_RX" "$@"; }
URL="https://$NAME:$PORT/metrics"
# tls CURL_ARGS...: curl over HTTPS to the daemon, trusting the test CA.
tls() {
	rx curl -s --max-time 10 --cacert "$WORK/ca.crt" \
		--resolve "$NAME:$PORT:127.0.0.1" "$@"
}
# code CURL_ARGS...: the HTTP status of one request to $URL.
code() { tls -o /dev/null -w '%{http_code}' "$@" "$URL"; }

# until SECONDS CMD...: CMD until it succeeds, at most SECONDS.
until_ok() {
	local end=$(( $(date +%s) + $1 )); shift
	while ! "$@"; do
		[ "$(date +%s)" -lt "$end" ] || return 1
		sleep 0.2
	done
}

fs_test mau /usr/bin/prometheus /usr/bin/curl /usr/bin/openssl /usr/bin/htpasswd
fs_test_pair

# ---------------------------------------------------------------- material
# cert NAME CN EXT: a P-256 key and a certificate the test CA signs.
cert() {
	openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
		-keyout "$WORK/$1.key" -out "$WORK/$1.csr" -subj "/CN=$2" 2>/dev/null &&
	openssl x509 -req -in "$WORK/$1.csr" -CA "$WORK/${4:-ca}.crt" \
		-CAkey "$WORK/${4:-ca}.key" -set_serial "$RANDOM" -days 2 \
		-out "$WORK/$1.crt" -extfile <(printf '%s\n' "$3") 2>/dev/null
}
ca() {
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
		-keyout "$WORK/$1.key" -out "$WORK/$1.crt" -days 2 -subj "/CN=$1" \
		-addext basicConstraints=critical,CA:TRUE 2>/dev/null
}
ca ca && ca rogue &&
cert server "$NAME" "subjectAltName=DNS:$NAME,IP:127.0.0.1
extendedKeyUsage=serverAuth" &&
cert client scraper "extendedKeyUsage=clientAuth" &&
cert rogueclient scraper "extendedKeyUsage=clientAuth" rogue ||
	bail "openssl made a CA, a server and client certificates"
PASS=$(openssl rand -hex 12)
HASH=$(htpasswd -nbB -C 10 scraper "$PASS" | cut -d: -f2-)
[[ "$HASH" == '$2y$10$'* ]] || bail "htpasswd made a bcrypt hash ($HASH)"
ok "openssl made a CA and certificates, htpasswd a bcrypt hash ($HASH)"

# Relative paths: read from the file's directory, as exporter-toolkit does.
cat >"$WORK/web.yml" <<EOF
# flowsketchd --metrics-web-config
tls_server_config:
  cert_file: server.crt
  key_file: $WORK/server.key
basic_auth_users:
  scraper: '$HASH'
EOF

fsd_start --blocklist "$WORK/blocklist" --metrics "127.0.0.1:$PORT" \
	--metrics-web-config "$WORK/web.yml" -v || bail "flowsketchd starts with the web config"
up() { [ "$(code -u "scraper:$PASS")" = 200 ]; }
until_ok 20 up || bail "/metrics answers 200 over HTTPS with the password"
ok "flowsketchd serves https://$NAME:$PORT/metrics ($(grep -o 'metrics at .*' "$WORK/daemon.log"))"

# ---------------------------------------------------------------- access
rx curl -s --max-time 5 -o "$WORK/plain.out" -w '%{http_code}' \
	"http://127.0.0.1:$PORT/metrics" >"$WORK/plain.code"
check "plain HTTP: no HTTP answer, no metrics (code $(cat "$WORK/plain.code"))" \
	bash -c "[ \"\$(cat '$WORK/plain.code')\" = 000 ] && ! grep -q flowsketch_ '$WORK/plain.out' 2>/dev/null"
tls -o "$WORK/noauth.out" -D "$WORK/noauth.hdr" -w '%{http_code}' "$URL" >"$WORK/noauth.code"
check "HTTPS without credentials: 401 ($(cat "$WORK/noauth.code")) with WWW-Authenticate: Basic, no metrics" \
	bash -c "[ \"\$(cat '$WORK/noauth.code')\" = 401 ] &&
		 grep -qi '^www-authenticate: basic realm=\"flowsketch\"' '$WORK/noauth.hdr' &&
		 ! grep -q flowsketch_ '$WORK/noauth.out'"
check "a wrong password: 401" [ "$(code -u "scraper:wrong$PASS")" = 401 ]
check "the same wrong password again: 401" [ "$(code -u "scraper:wrong$PASS")" = 401 ]
check "an unknown user with the right password: 401" [ "$(code -u "nobody:$PASS")" = 401 ]
c=$(code -u "scraper:")
check "an empty password: 401 ($c)" [ "$c" = 401 ]
tls -u "scraper:$PASS" -o "$WORK/m.prom" -w '%{http_code}' "$URL" >"$WORK/ok.code"
check "the right user and password: 200 and the metrics" \
	bash -c "[ \"\$(cat '$WORK/ok.code')\" = 200 ] && grep -q '^flowsketch_packets_total' '$WORK/m.prom'"
check "HEAD with the password: 200; /nope with it: 404 (after access)" \
	bash -c "[ \"\$(nsenter --net=/run/netns/$NS_RX curl -s -I --cacert '$WORK/ca.crt' --resolve '$NAME:$PORT:127.0.0.1' -u 'scraper:$PASS' -o /dev/null -w '%{http_code}' '$URL')\" = 200 ] &&
		 [ \"\$(nsenter --net=/run/netns/$NS_RX curl -s --cacert '$WORK/ca.crt' --resolve '$NAME:$PORT:127.0.0.1' -u 'scraper:$PASS' -o /dev/null -w '%{http_code}' 'https://$NAME:$PORT/nope')\" = 404 ]"
check "/nope without credentials: 401 (access comes first)" \
	[ "$(tls -o /dev/null -w '%{http_code}' "https://$NAME:$PORT/nope")" = 401 ]

# ---------------------------------------------------------------- prometheus
# prom JOB PASSWORD: a scrape config of the daemon with these credentials.
prom_job() {
	cat <<EOF
  - job_name: $1
    scheme: https
    basic_auth:
      username: scraper
      password: '$2'
    tls_config:
      ca_file: $WORK/ca.crt
      server_name: $NAME
    static_configs:
      - targets: ['127.0.0.1:$PORT']
EOF
}
mkdir -p "$WORK/prom"
{
	printf 'global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n'
	prom_job flowsketch "$PASS"
	prom_job intruder "not$PASS"
} >"$WORK/prom/prometheus.yml"
nsenter --net="/run/netns/$NS_RX" /usr/bin/prometheus \
	--config.file="$WORK/prom/prometheus.yml" \
	--storage.tsdb.path="$WORK/prom/data" \
	--web.listen-address="127.0.0.1:$PROM_PORT" >"$WORK/prom.log" 2>&1 &
PROM_PID=$!
# query PROMQL: the first result's value ("" if none).
query() {
	rx curl -s --max-time 5 "http://127.0.0.1:$PROM_PORT/api/v1/query" \
		--data-urlencode "query=$1" | jq -r '.data.result[0].value[1] // ""'
}
scraped() {
	[ "$(query 'up{job="flowsketch"}')" = 1 ] &&
	[ "$(query 'count({__name__=~"flowsketch_.+",job="flowsketch"})')" -gt 0 ] 2>/dev/null &&
	[ "$(query 'up{job="intruder"}')" = 0 ]
}
if until_ok 60 scraped; then
	ok "prometheus scraped over HTTPS with basic auth: up == 1, $(query 'count({__name__=~"flowsketch_.+",job="flowsketch"})') flowsketch_ series; with a wrong password up == 0"
else
	not_ok "prometheus scraped over HTTPS with basic auth (up $(query 'up{job="flowsketch"}'), intruder $(query 'up{job="intruder"}'))"
	tail -5 "$WORK/prom.log" | diag
fi
check "prometheus's flowsketch_packets_total has the daemon's interface" \
	[ "$(query "count(flowsketch_packets_total{job=\"flowsketch\",interface=\"$VETH_RX\"})")" = 2 ]
# A few more scrapes (cache hits, counted at the end).
scrapes() { query 'count_over_time(up{job="flowsketch"}[5m])'; }
n0=$(scrapes)
more_scrapes() { [ "$(scrapes)" -ge $((${n0:-0} + 3)) ] 2>/dev/null; }
check "prometheus scraped 3 more times ($n0 before)" until_ok 20 more_scrapes
fs_daemon_stop "$PROM_PID"; PROM_PID=""

# ---------------------------------------------------------------- the budget
# FLOOD new wrong passwords as fast as curl goes: bcrypt's budget (a 1 s
# burst of CPU time, some 30 to 60 ms a check at cost 10, then 10 % of
# the time) runs out, the rest are answered 429 at once, and the cached
# pair still gets 200 meanwhile.
FLOOD=150
rx bash -c "for i in \$(seq $FLOOD); do curl -s --max-time 10 --cacert '$WORK/ca.crt' \
	--resolve '$NAME:$PORT:127.0.0.1' -u \"scraper:flood\$i\" -o /dev/null \
	-w '%{http_code}\n' '$URL'; done" >"$WORK/flood.codes" &
flood=$!
flooding() { [ "$(wc -l <"$WORK/flood.codes")" -ge 5 ]; }
until_ok 20 flooding
during=$(code -u "scraper:$PASS")
wait "$flood"
n401=$(grep -c '^401$' "$WORK/flood.codes")
n429=$(grep -c '^429$' "$WORK/flood.codes")
check "a flood of $FLOOD new wrong passwords: $n401 checked (401), $n429 refused over budget (429), nothing else" \
	[ "$n429" -gt 0 -a "$n401" -gt 0 -a $((n401 + n429)) = $FLOOD ]
check "meanwhile the cached password: 200 ($during)" [ "$during" = 200 ]

# bcrypt ran for each distinct pair once: the right one, the wrong one,
# nobody's, the empty one, prometheus's intruder, and the flood's 401s.
fsd_stop; rc=$?
runs=$(sed -n 's/.*metrics: \([0-9]*\) bcrypt checks, \([0-9]*\) cache hits.*/\1/p' "$WORK/daemon.log")
hits=$(sed -n 's/.*metrics: \([0-9]*\) bcrypt checks, \([0-9]*\) cache hits.*/\2/p' "$WORK/daemon.log")
check "SIGTERM: exit 0 ($rc)" [ "$rc" = 0 ]
check "bcrypt ran once per distinct pair: $runs = 5 + $n401 (the flood's); the $hits repeats were cache hits" \
	[ "$runs" = $((5 + n401)) -a "${hits:-0}" -ge 5 ]

# ---------------------------------------------------------------- mTLS
cat >"$WORK/mtls.yml" <<EOF
tls_server_config:
  cert_file: server.crt
  key_file: server.key
  client_auth_type: RequireAndVerifyClientCert
  client_ca_file: ca.crt
  min_version: TLS13
basic_auth_users:
  scraper: '$HASH'
EOF
fsd_start --blocklist "$WORK/blocklist" --metrics "127.0.0.1:$PORT" \
	--metrics-web-config "$WORK/mtls.yml" ||
	bail "flowsketchd starts with client certificates required"
mup() { [ "$(code --cert "$WORK/client.crt" --key "$WORK/client.key" -u "scraper:$PASS")" = 200 ]; }
until_ok 20 mup || bail "/metrics answers 200 with a client certificate"
ok "RequireAndVerifyClientCert: the test CA's client certificate and the password: 200"
c=$(code -u "scraper:$PASS")
check "no client certificate: refused ($c: 403, or no HTTP answer)" [ "$c" = 403 -o "$c" = 000 ]
c=$(code --cert "$WORK/rogueclient.crt" --key "$WORK/rogueclient.key" -u "scraper:$PASS")
check "a client certificate of another CA: refused ($c)" [ "$c" = 403 -o "$c" = 000 ]
c=$(code --cert "$WORK/client.crt" --key "$WORK/client.key")
check "the client certificate without the password: 401 ($c)" [ "$c" = 401 ]
c=$(code --tls-max 1.2 --cert "$WORK/client.crt" --key "$WORK/client.key" -u "scraper:$PASS")
check "min_version TLS13: a TLS 1.2 client gets no answer ($c)" [ "$c" = 000 ]
fsd_stop

# ---------------------------------------------------------------- auth only
# basic_auth_users without TLS: exporter-toolkit allows it; the daemon
# says the passwords cross the network in clear, and checks them.
printf 'basic_auth_users:\n  scraper: %s\n' "$HASH" >"$WORK/auth.yml"
: >"$WORK/daemon.log"
fsd_start --blocklist "$WORK/blocklist" --metrics "127.0.0.1:$PORT" \
	--metrics-web-config "$WORK/auth.yml" || bail "flowsketchd starts with basic auth only"
hcode() { rx curl -s --max-time 5 -o /dev/null -w '%{http_code}' "$@" "http://127.0.0.1:$PORT/metrics"; }
hup() { [ "$(hcode -u "scraper:$PASS")" = 200 ]; }
until_ok 20 hup || bail "/metrics answers 200 over HTTP with the password"
check "basic auth without TLS: a warning that passwords cross the network in clear" \
	grep -q "basic_auth_users without tls_server_config: passwords cross the network in clear" "$WORK/daemon.log"
check "basic auth without TLS: no credentials 401, a wrong password 401, the right one 200" \
	[ "$(hcode)" = 401 -a "$(hcode -u "scraper:x$PASS")" = 401 -a "$(hcode -u "scraper:$PASS")" = 200 ]
fsd_stop

# ---------------------------------------------------------------- bad files
# refused WHAT TEXT [ARGS...]: $WORK/bad.yml (written by the caller) at
# start: exit 1, one line with TEXT, nothing pinned, no state, no socket.
refused() {
	local what=$1 text=$2; shift 2
	fsd_refused "$what" "$text" --metrics "127.0.0.1:$PORT" \
		--metrics-web-config "$WORK/bad.yml" "$@"
}
B="$WORK/bad.yml"
printf 'basic_auth_users:\n  scraper: %s\nhttp_server_config:\n  http2: false\n' "$HASH" >"$B"
refused "an unknown key" "$B:3: http_server_config: not supported"
printf 'tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n  max_version: TLS13\n' >"$B"
refused "an exporter-toolkit key flowsketchd does not implement" "$B:4: tls_server_config.max_version: not supported"
printf 'tls_server_config:\n  cert_file: missing.crt\n  key_file: server.key\n' >"$B"
refused "a missing cert file" "$B:2: tls_server_config.cert_file: cannot read $WORK/missing.crt: No such file or directory"
printf 'basic_auth_users:\n  scraper: "%s\n  other: x\n' "$HASH" >"$B"
refused "bad YAML (an unclosed quote)" "$B:4: not YAML"
printf 'tls_server_config:\n  cert_file: server.crt\n   key_file: server.key\n' >"$B"
refused "bad YAML (indentation)" "$B:3: not YAML"
printf 'tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n  client_auth_type: RequestClientCert\n' >"$B"
refused "client_auth_type RequestClientCert" "$B:4: tls_server_config.client_auth_type: \"RequestClientCert\" is not supported"
printf 'tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n  min_version: TLS11\n' >"$B"
refused "min_version TLS11" "$B:4: tls_server_config.min_version: \"TLS11\" is not supported"
printf 'tls_server_config:\n  cert_file: server.crt\n  key_file: client.key\n' >"$B"
refused "a key not of the certificate" "$B:2: tls_server_config.cert_file: the certificate and key_file are not a usable pair"
printf 'basic_auth_users:\n  scraper: secret\n' >"$B"
refused "a password, not a hash" "$B:2: basic_auth_users.scraper: not a bcrypt hash"
printf 'basic_auth_users:\n  scraper: %s\n' "${HASH/\$10\$/\$15\$}" >"$B"
refused "bcrypt cost 15" "$B:2: basic_auth_users.scraper: bcrypt cost 15 is outside 4 .. 14"
printf 'basic_auth_users:\n  scraper: %s\n  scraper: %s\n' "$HASH" "$HASH" >"$B"
refused "a user twice" "$B:3: basic_auth_users.scraper: given twice"
: >"$B"
refused "an empty file" "$B: empty"
printf 'tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n  client_ca_file: ca.crt\n' >"$B"
refused "client_ca_file without RequireAndVerifyClientCert" "$B:4: tls_server_config.client_ca_file: verifies nothing"
rm -f "$B"
refused "a missing file" "$B: cannot read it: No such file or directory"
rx "$FSD" -i "$VETH_RX" --pin-dir "$PIN_DIR-bad" --metrics-web-config "$WORK/web.yml" \
	--blocklist "$WORK/blocklist" >/dev/null 2>"$WORK/bad.err"
rc=$?
check "--metrics-web-config without --metrics: exit 1 ($rc), \"$(cat "$WORK/bad.err")\"" \
	bash -c "[ $rc = 1 ] && grep -qF -- '--metrics-web-config needs --metrics' '$WORK/bad.err'"
finish
