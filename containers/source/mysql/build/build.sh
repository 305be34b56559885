#!/bin/sh
# Build the MySQL tree at /src as Debian's debian/rules does (mysql-9.7/debian/rules:
# dpkg-buildflags with hardening=+all, RelWithDebInfo, BUILD_CONFIG=mysql_release, the DEB
# layout under /usr with Debian's directories, the system's libraries, tcmalloc linked in where
# Debian links it), with make, the compilers behind ccache (a volume every build shares, so a
# neighbouring commit recompiles only what changed). The server is installed stripped into
# /out, the tree the run image (../run) copies to /.
#
# Left out, because a benchmark of InnoDB does not need them and they would add hours on 2
# cores: MySQL Router, group replication (plugin and its XCom/GCS libraries), the ndbcluster
# storage engine (Debian's mysqld carries it, built in and inactive unless --ndbcluster; it and
# the NDB API it links are several hundred files), the unit tests and the mysql-test tree.
# Debian's -DWITH_EMBEDDED_SERVER is gone since 8.0. Recipe flags bring them back:
# -DWITH_GROUP_REPLICATION=1, -DWITH_ROUTER=ON, -DWITHOUT_NDBCLUSTER_STORAGE_ENGINE=0.
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
case "$(dpkg --print-architecture)" in i386) tcmalloc=OFF ;; *) tcmalloc=system ;; esac
version="$(sed -n 's/^MYSQL_VERSION_\(MAJOR\|MINOR\|PATCH\)=//p' MYSQL_VERSION 2>/dev/null | paste -sd. -)"

mkdir -p "$build"
cd "$build"
if ! cmake -G "Unix Makefiles" /src \
    -DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache \
    -DCMAKE_INSTALL_PREFIX=/usr -DMYSQL_UNIX_ADDR=/var/run/mysqld/mysqld.sock \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBUILD_CONFIG=mysql_release \
    -DWITH_LIBWRAP=OFF -DWITH_SYSTEM_LIBS=ON -DWITH_MECAB=system \
    -DWITH_TCMALLOC="$tcmalloc" -DWITH_ZLIB=system -DWITH_FIDO=system \
    -DCOMPILATION_COMMENT="rmatrix source build${version:+ of $version}" \
    -DINSTALL_LAYOUT=DEB -DINSTALL_DOCDIR=share/mysql/docs \
    -DINSTALL_DOCREADMEDIR=share/mysql -DINSTALL_INCLUDEDIR=include/mysql \
    -DINSTALL_INFODIR=share/mysql/docs -DINSTALL_LIBDIR="lib/$multiarch" \
    -DINSTALL_MANDIR=share/man -DINSTALL_MYSQLSHAREDIR=share/mysql \
    -DINSTALL_PLUGINDIR=lib/mysql/plugin -DINSTALL_SBINDIR=sbin \
    -DINSTALL_SUPPORTFILESDIR=share/mysql -DSYSCONFDIR=/etc/mysql \
    -DWITH_ARCHIVE_STORAGE_ENGINE=ON -DWITH_BLACKHOLE_STORAGE_ENGINE=ON \
    -DWITH_FEDERATED_STORAGE_ENGINE=ON -DWITH_EXTRA_CHARSETS=all \
    -DWITH_ROUTER=OFF -DWITH_GROUP_REPLICATION=0 -DWITHOUT_NDBCLUSTER_STORAGE_ENGINE=1 \
    -DWITH_UNIT_TESTS=OFF -DINSTALL_MYSQLTESTDIR= \
    "$@"; then
  tail -n 60 CMakeFiles/CMakeError.log 2>/dev/null >&2 || true
  echo "rmatrix-build: cmake configure failed" >&2
  exit 1
fi
nice -n 19 make -j"$jobs"
nice -n 19 make install/strip DESTDIR=/out >/dev/null

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
