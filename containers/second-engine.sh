#!/usr/bin/env bash
# A second Docker engine on this machine, for the pool tests, standing in for an engine on
# another host: its own socket, data root, exec root and pidfile, no bridge and no iptables
# (so its containers use host networking), and its own network namespace (`rmatrix-d2`), so
# that its 127.0.0.1 is not this machine's: a server it runs cannot be reached from here, as
# on a real remote host. Two forwarders (socat) stand for the network between the hosts:
#   - tcp://127.0.0.1:23750 here -> the engine's unix socket, so the tcp:// transport is
#     exercised too;
#   - tcp://127.0.0.1:23760 here -> the engine's own TLS listener (mutual TLS, certificates
#     made here once under $root/tls: ca.pem, and client/{ca,cert,key}.pem for DOCKER_CERT_PATH);
#   - 127.0.0.1:5000 in the namespace -> this machine's registry (containers/local-registry.sh).
# And an sshd of its own on 127.0.0.1:2222 (when openssh-server is installed) whose sessions
# talk to this engine (`SetEnv DOCKER_HOST`), known to ssh as the host alias `rmatrix-d2`
# (/etc/ssh/ssh_config.d/rmatrix-d2.conf: address, port, key, known_hosts file of its own),
# so that ssh://root@rmatrix-d2 reaches it as `docker -H ssh://` does (bollard's ssh://
# takes no port: an alias is how a port is given).
# (A dockerd started with --bridge=none in this machine's namespace also deletes the default
# engine's docker0 bridge at start-up; in its own namespace it has none to delete.)
# Idempotent. Usage:
#   containers/second-engine.sh start [image ...]   start it (when not running) and copy
#                                                    the named images from the default engine
#   containers/second-engine.sh stop                 stop it (its containers stop with it)
#   containers/second-engine.sh status               exit 0 when it answers
set -euo pipefail

root=${RMATRIX_D2_ROOT:-/run/rmatrix-d2}
data=${RMATRIX_D2_DATA:-/var/lib/rmatrix-d2}
sock="$root/docker.sock"
tcp=${RMATRIX_D2_TCP:-127.0.0.1:23750}
tls_tcp=${RMATRIX_D2_TLS_TCP:-127.0.0.1:23760}
tls="$root/tls"
ssh_keys="$data/ssh" # kept across reboots: known_hosts entries stay valid
ssh_port=${RMATRIX_D2_SSH_PORT:-2222}
pidfile="$root/docker.pid"
netns=${RMATRIX_D2_NETNS:-rmatrix-d2}
registry=${RMATRIX_REGISTRY:-127.0.0.1:5000}
log=/var/log/rmatrix-d2.log
d2() { docker -H "unix://$sock" "$@"; }
# A daemon must not keep the descriptors it was started with: a caller under
# `flock /tmp/rmatrix-docker.lock` would otherwise leave the lock held by the daemon forever.
close_inherited() {
  local fd
  for fd in /proc/"$BASHPID"/fd/*; do
    fd=${fd##*/}
    [ "$fd" -gt 2 ] && eval "exec $fd>&-" 2>/dev/null || true
  done
}
say() { echo "second-engine: $*" >&2; }

answers() { d2 info >/dev/null 2>&1; }

# Start a forwarder in the background, detached like the daemon; `pidname` names its pidfile.
forward() {
  local pidname=$1
  shift
  local pf="$root/$pidname.pid"
  if [ -f "$pf" ] && kill -0 "$(cat "$pf")" 2>/dev/null; then return 0; fi
  (
    close_inherited
    exec setsid nohup "$@" >>"$log" 2>&1 </dev/null
  ) &
  echo $! >"$pf"
}

# A CA, the engine's certificate (for 127.0.0.1, where the forwarder makes it reachable)
# and a client certificate, as Docker's "Protect the Docker daemon socket" makes them.
certificates() {
  [ -f "$tls/client/key.pem" ] && return 0
  mkdir -p "$tls/client"
  (
    cd "$tls"
    openssl genrsa -out ca-key.pem 2048 2>/dev/null
    openssl req -new -x509 -days 30 -key ca-key.pem -sha256 -subj "/CN=rmatrix-test-ca" -out ca.pem
    openssl genrsa -out server-key.pem 2048 2>/dev/null
    openssl req -new -key server-key.pem -subj "/CN=rmatrix-d2" -out server.csr
    printf 'subjectAltName = IP:127.0.0.1\nextendedKeyUsage = serverAuth\n' >server.ext
    openssl x509 -req -days 30 -sha256 -in server.csr -CA ca.pem -CAkey ca-key.pem \
      -CAcreateserial -out server-cert.pem -extfile server.ext 2>/dev/null
    openssl genrsa -out client/key.pem 2048 2>/dev/null
    openssl req -new -key client/key.pem -subj "/CN=rmatrix-test" -out client.csr
    printf 'extendedKeyUsage = clientAuth\n' >client.ext
    openssl x509 -req -days 30 -sha256 -in client.csr -CA ca.pem -CAkey ca-key.pem \
      -CAcreateserial -out client/cert.pem -extfile client.ext 2>/dev/null
    cp ca.pem client/ca.pem
    chmod 600 ca-key.pem server-key.pem client/key.pem
  )
}

# sshd for ssh:// (skipped without openssh-server), and the host alias naming it.
ssh_server() {
  [ -x /usr/sbin/sshd ] || { say "no /usr/sbin/sshd: ssh:// not served"; return 0; }
  mkdir -p "$ssh_keys" /run/sshd
  [ -f "$ssh_keys/host_key" ] || ssh-keygen -q -t ed25519 -N '' -f "$ssh_keys/host_key"
  [ -f "$ssh_keys/client_key" ] || ssh-keygen -q -t ed25519 -N '' -C rmatrix-test -f "$ssh_keys/client_key"
  cp "$ssh_keys/client_key.pub" "$ssh_keys/authorized_keys"
  printf '[127.0.0.1]:%s %s\n' "$ssh_port" "$(cut -d' ' -f1,2 "$ssh_keys/host_key.pub")" \
    >"$ssh_keys/known_hosts"
  cat >"$root/sshd_config" <<CONF
ListenAddress 127.0.0.1:$ssh_port
HostKey $ssh_keys/host_key
PidFile $root/sshd.pid
AuthorizedKeysFile $ssh_keys/authorized_keys
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
SetEnv DOCKER_HOST=unix://$sock
CONF
  mkdir -p /etc/ssh/ssh_config.d
  cat >/etc/ssh/ssh_config.d/rmatrix-d2.conf <<CONF
# rmatrix's test engine (containers/second-engine.sh): ssh://root@rmatrix-d2
Host rmatrix-d2
  HostName 127.0.0.1
  Port $ssh_port
  IdentityFile $ssh_keys/client_key
  IdentitiesOnly yes
  UserKnownHostsFile $ssh_keys/known_hosts
  StrictHostKeyChecking yes
CONF
  if ! { [ -f "$root/sshd.pid" ] && kill -0 "$(cat "$root/sshd.pid")" 2>/dev/null; }; then
    (close_inherited; exec /usr/sbin/sshd -f "$root/sshd_config" -E "$log")
  fi
}

namespace() {
  ip netns list | grep -qw "$netns" || ip netns add "$netns"
  ip netns exec "$netns" ip link set lo up
}

start() {
  if ! answers; then
    mkdir -p "$root" "$data"
    # A dead daemon's pidfile would stop the new one from starting.
    if [ -f "$pidfile" ] && ! kill -0 "$(cat "$pidfile")" 2>/dev/null; then rm -f "$pidfile"; fi
    command -v socat >/dev/null 2>&1 || { say "socat is missing (apt-get install socat)"; exit 3; }
    namespace
    certificates
    say "starting dockerd in network namespace $netns on $sock (log: $log)"
    # A configuration of its own: the host's /etc/docker/daemon.json belongs to the first
    # engine (its data-root, hosts or bridge would clash with the flags below).
    echo '{}' >"$root/daemon.json"
    (
      close_inherited
      exec setsid nohup nsenter --net="/run/netns/$netns" dockerd \
        --config-file "$root/daemon.json" \
        --host "unix://$sock" --host "tcp://127.0.0.1:2376" \
        --tlsverify --tlscacert "$tls/ca.pem" --tlscert "$tls/server-cert.pem" \
        --tlskey "$tls/server-key.pem" \
        --data-root "$data" --exec-root "$root/exec" --pidfile "$pidfile" \
        --bridge=none --iptables=false --ip-masq=false \
        >>"$log" 2>&1 </dev/null
    ) &
    for _ in $(seq 1 60); do answers && break; sleep 1; done
    answers || { say "dockerd did not come up:"; tail -20 "$log" >&2; exit 3; }
  fi
  forward tcp socat "TCP-LISTEN:${tcp##*:},bind=${tcp%:*},reuseaddr,fork" "UNIX-CONNECT:$sock"
  forward tls-out socat "TCP-LISTEN:${tls_tcp##*:},bind=${tls_tcp%:*},reuseaddr,fork" \
    "UNIX-CONNECT:$root/tls.sock"
  forward tls-in nsenter --net="/run/netns/$netns" socat "UNIX-LISTEN:$root/tls.sock,fork,unlink-early" \
    "TCP:127.0.0.1:2376"
  forward registry-out socat "UNIX-LISTEN:$root/registry.sock,fork,unlink-early" "TCP:$registry"
  forward registry-in nsenter --net="/run/netns/$netns" socat \
    "TCP-LISTEN:${registry##*:},bind=${registry%:*},reuseaddr,fork" "UNIX-CONNECT:$root/registry.sock"
  ssh_server
  for _ in $(seq 1 20); do docker -H "tcp://$tcp" info >/dev/null 2>&1 && break; sleep 0.5; done
  # Its own image store: copy what the tests name (docker save | docker load) when missing.
  # A name without a tag copies every tag of that repository the default engine has.
  local image
  for name in "$@"; do
    if [[ $name == *:* ]]; then
      images=("$name")
    else
      mapfile -t images < <(docker images --format '{{.Repository}}:{{.Tag}}' "$name")
    fi
    for image in "${images[@]}"; do
      if ! d2 image inspect "$image" >/dev/null 2>&1; then
        say "copying $image"
        docker save "$image" | d2 load -q >/dev/null
      fi
    done
  done
}

stop() {
  if [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; then
    local pid
    pid=$(cat "$pidfile")
    kill "$pid"
    for _ in $(seq 1 60); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
  fi
  # Nothing of this engine may keep the tcp port: a later start binds it again.
  local f
  for f in tcp tls-out tls-in registry-out registry-in sshd; do
    if [ -f "$root/$f.pid" ]; then
      kill "$(cat "$root/$f.pid")" 2>/dev/null || true
      rm -f "$root/$f.pid"
    fi
  done
  say "stopped"
}

case "${1:-}" in
  start) shift; start "$@" ;;
  stop) stop ;;
  status) answers ;;
  *) echo "usage: $0 start [image ...] | stop | status" >&2; exit 2 ;;
esac
