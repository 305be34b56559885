# Sourced by the benchmarks that measure builds of scripts/redis-source-repo.sh's repository
# (ab-detect, bisect-detect, nightly-detect, twin-builds, power-ab): the pieces of their
# matrices, so that every one measures the same cells the same way.

# A server built from the repository at REV, pinned to CPU 1 (the client gets CPU 0's share).
redis_source_server() { # NAME REPOSITORY REV
  printf '  %s:\n    source: {git: %s, rev: %s, recipe: redis, flags: [USE_SYSTEM_JEMALLOC=yes]}\n    cpuset: "1"\n' "$1" "$2" "$3"
}

# The cells: each of WORKLOADS (get, set) at 4 clients on 10,000 keys, LENGTH a round after
# 300 ms of warm-up, persistence off.
redis_source_cells() { # LENGTH WORKLOAD...
  local length=$1 w
  shift
  echo "configs:"
  echo "  plain: {redis_conf: {appendonly: \"no\", save: \"\"}}"
  echo "workloads:"
  for w in "$@"; do echo "  $w: {redis: {test: $w, keyspace: 10000}}"; done
  echo "concurrency: [4]"
  echo "warmup: 300ms"
  echo "length: $length"
}

# A whole matrix of one server, `redis`, at HEAD (ab and bisect pick the revisions).
redis_source_matrix() { # NAME REPOSITORY LENGTH WORKLOAD...
  local name=$1 repo=$2
  shift 2
  echo "name: $name"
  echo "servers:"
  redis_source_server redis "$repo" HEAD
  redis_source_cells "$@"
}
