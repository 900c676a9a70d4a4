#!/usr/bin/env bash
# fetch.sh PACKAGE DIR: the Debian source of PACKAGE (the version of this machine's packages:
# mpich, hdf5, pnetcdf), unpacked once into DIR/PACKAGE; prints that directory. Enables the
# deb-src lines of Debian 12's own archive (a sources file of its own) and installs dpkg-dev
# when they are missing. Safe to run again and from several builds at once.
set -euo pipefail
pkg=$1 dir=$2
mkdir -p "$dir"
out=$dir/$pkg
exec 9>"$dir/.fetch.lock"
flock 9
if [ ! -f "$out/.unpacked" ]; then
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo=sudo
    list=/etc/apt/sources.list.d/ampio-deb-src.sources
    if ! apt-get source --print-uris -qq "$pkg" >/dev/null 2>&1; then
        [ -f "$list" ] || printf '%s\n' "Types: deb-src" "URIs: http://deb.debian.org/debian" \
            "Suites: bookworm bookworm-updates" "Components: main" \
            "Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg" | $sudo tee "$list" >/dev/null
        $sudo apt-get -o DPkg::Lock::Timeout=900 update -qq
    fi
    command -v dpkg-source >/dev/null ||
        DEBIAN_FRONTEND=noninteractive $sudo apt-get -o DPkg::Lock::Timeout=900 install -y -qq \
            --no-install-recommends dpkg-dev >&2
    work=$(mktemp -d "$dir/.fetch.XXXXXX")
    # the source with Debian's patches applied: what the installed package was built from
    if ! (cd "$work" && apt-get source -qq --download-only "$pkg" &&
        dpkg-source -x "$pkg"_*.dsc src) >"$work/log" 2>&1; then
        cat "$work/log" >&2
        rm -rf "$work"
        echo "fetch.sh: cannot fetch the source of $pkg" >&2
        exit 1
    fi
    rm -rf "$out"
    mv "$work/src" "$out"
    rm -rf "$work"
    touch "$out/.unpacked"
fi
echo "$out"
