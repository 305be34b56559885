#!/bin/sh
# Build the MariaDB tree at /src as Debian's debian/rules does (mariadb/debian/rules:
# dpkg-buildflags with hardening=+all, RelWithDebInfo, BUILD_CONFIG=mysql_release, the DEB
# layout under /usr, system libraries), with make as Debian does (cmake's Ninja generator fails
# on 10.11: "multiple rules generate libmariadb/libmariadb/libmariadb.a"), the compilers behind
# ccache (a volume every build shares, so a neighbouring commit recompiles only what changed).
# The server is installed stripped into /out, the tree the run image (../run) copies to /.
#
# Left out, because a benchmark of InnoDB (and of the other built-in engines) does not need them
# and they would double the build on 2 cores: the engines RocksDB, Mroonga, Spider, ColumnStore,
# Connect, TokuDB (gone since 10.6; the option is harmless), S3 and OQGraph, the AWS key
# management plugin (Debian leaves it out too), the embedded server (libmariadbd, a second
# compilation of the server), mariabackup, the unit tests and the mysql-test tree.
#
# The recipe's flags are cmake -DNAME=VALUE ("$@", checked by rmatrix) and come after these
# defaults, so they win. On success /out/usr/share/rmatrix/runtime-packages lists the Debian
# packages the installed binaries and plugins link against, which the run image installs.
set -eu
export CCACHE_DIR=/ccache CCACHE_MAXSIZE="${CCACHE_MAXSIZE:-10G}"
jobs="${JOBS:-2}"
build=/build
export DEB_BUILD_MAINT_OPTIONS=hardening=+all
cd /src
# dpkg-buildflags reads the working directory for -ffile-prefix-map: always /src.
CFLAGS="$(dpkg-buildflags --get CFLAGS) $(dpkg-buildflags --get CPPFLAGS)"
CXXFLAGS="$(dpkg-buildflags --get CXXFLAGS) $(dpkg-buildflags --get CPPFLAGS)"
LDFLAGS="$(dpkg-buildflags --get LDFLAGS)"
export CFLAGS CXXFLAGS LDFLAGS
multiarch="$(dpkg-architecture -qDEB_HOST_MULTIARCH)"
case "$(dpkg --print-architecture)" in amd64|arm64|ppc64el|riscv64) pmem=ON ;; *) pmem=OFF ;; esac
version="$(sed -n 's/^MYSQL_VERSION_\(MAJOR\|MINOR\|PATCH\)=//p' VERSION 2>/dev/null | paste -sd. -)"

mkdir -p "$build"
cd "$build"
if ! cmake -G "Unix Makefiles" /src \
    -DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache \
    -DCMAKE_INSTALL_PREFIX=/usr -DCMAKE_INSTALL_SYSCONFDIR=/etc \
    -DCMAKE_INSTALL_LOCALSTATEDIR=/var -DCMAKE_INSTALL_RUNSTATEDIR=/run \
    -DCMAKE_INSTALL_LIBDIR="lib/$multiarch" -DFETCHCONTENT_FULLY_DISCONNECTED=ON \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCOMPILATION_COMMENT="rmatrix source build${version:+ of $version}" \
    -DSYSTEM_TYPE=debian-linux-gnu \
    -DBUILD_CONFIG=mysql_release -DDEB=Debian -DINSTALL_LAYOUT=DEB \
    -DCONC_DEFAULT_CHARSET=utf8mb4 \
    -DWITH_PMEM="$pmem" -DWITH_NUMA=AUTO -DIGNORE_AIO_CHECK=ON -DWITH_URING=ON \
    -DWITH_LIBAIO=ON -DWITH_INNODB_SNAPPY=ON \
    -DPLUGIN_AWS_KEY_MANAGEMENT=NO -DPLUGIN_COLUMNSTORE=NO -DPLUGIN_ROCKSDB=NO \
    -DPLUGIN_MROONGA=NO -DPLUGIN_SPIDER=NO -DPLUGIN_CONNECT=NO -DPLUGIN_TOKUDB=NO \
    -DPLUGIN_S3=NO -DPLUGIN_OQGRAPH=NO \
    -DWITH_EMBEDDED_SERVER=OFF -DWITH_MARIABACKUP=OFF -DWITH_UNIT_TESTS=OFF \
    -DINSTALL_MYSQLTESTDIR= -DINSTALL_SQLBENCHDIR= \
    "$@"; then
  tail -n 60 CMakeFiles/CMakeError.log 2>/dev/null >&2 || true
  echo "rmatrix-build: cmake configure failed" >&2
  exit 1
fi
nice -n 19 make -j"$jobs"
nice -n 19 make install/strip DESTDIR=/out >/dev/null
# With no mysql-test tree, the PAM plugin's test files still land in /out/suite.
rm -rf /out/suite
# Upstream's /etc/my.cnf has "!includedir /etc/my.cnf.d", and mariadbd and my_print_defaults
# abort when that directory is missing. (/etc/mysql/mariadb.conf.d, with the .cnf files that
# load cracklib, gssapi and the compression providers, is read only through Debian's own
# /etc/mysql/my.cnf, which is packaging, not installed: those plugins stay unloaded, as in a
# mariadb-server without the mariadb-plugin-* packages.)
mkdir -p /out/etc/my.cnf.d

# A merged-/usr suite (bookworm and later) has /lib, /bin, /sbin as symlinks into /usr: a real
# /out/lib (systemd units, the PAM module under /lib/<multiarch>/security) copied to / would
# replace the symlink and with it the dynamic loader. Such trees move under /out/usr. The
# toolchain's suite is the run image's, so its / tells.
for d in bin sbin lib lib32 lib64 libx32; do
  if [ -L "/$d" ] && [ -d "/out/$d" ]; then
    dest="/out$(readlink -f "/$d")"
    mkdir -p "$dest"
    cp -a "/out/$d/." "$dest/"
    rm -rf "/out/$d"
  fi
done

# The Debian packages the installed ELF files link against (their own libraries excepted).
libdirs="$(find /out -name '*.so*' -type f -printf '%h\n' | sort -u | paste -sd: -)"
find /out -type f \( -perm -u+x -o -name '*.so*' \) -print \
  | while read -r f; do LD_LIBRARY_PATH="$libdirs" ldd "$f" 2>/dev/null || true; done \
  | awk '$2 == "=>" && $3 ~ /^\// && $3 !~ /^\/out\// { print $3 }' | sort -u \
  | while read -r lib; do
      case "$lib" in /usr/*) alt="${lib#/usr}" ;; *) alt="/usr$lib" ;; esac
      dpkg -S "$lib" 2>/dev/null || dpkg -S "$alt" 2>/dev/null \
        || dpkg -S "$(readlink -f "$lib")" 2>/dev/null \
        || echo "rmatrix-build: no package owns $lib" >&2
    done \
  | cut -d: -f1 | tr ',' '\n' | sed 's/^ *//' | sort -u >/tmp/runtime-packages
mkdir -p /out/usr/share/rmatrix
mv /tmp/runtime-packages /out/usr/share/rmatrix/runtime-packages
echo "rmatrix-build: runtime packages: $(paste -sd' ' - </out/usr/share/rmatrix/runtime-packages)"
ccache --show-stats
