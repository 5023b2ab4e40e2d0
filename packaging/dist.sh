#!/usr/bin/env bash
# packaging/dist.sh deb|image VERSION: the Debian package and the container image, for ./ernic dist --deb and
# --image, which have written the release archive first (its jars are the package's) and set JAVA_HOME to a JDK 25.
#
#   deb    target/dist/ernic_DEBVERSION_amd64.deb (DEBVERSION: VERSION with - as ~, so 0.1.0~SNAPSHOT sorts
#          before 0.1.0 as a snapshot should). A runtime made by jlink with the modules jdeps finds in the jars,
#          laid out and packed by jpackage (--type deb, --install-dir /usr); then the files jpackage cannot place
#          (the systemd unit, the docs, the launcher) are added and the AOT cache is trained on that very tree.
#   image  ernic-server:VERSION in the local docker, from the package's tree (packaging/image/Dockerfile):
#          the same runtime, jars and AOT cache on the C library alone. Builds the package first when missing.
#
# ERNIC_DIST_QUICK=DIR (deb only), for a test: the same package from the jars in DIR (not from the archive),
# written to DIR/../quick-deb/, in well under a minute: the jlink runtime comes from a cache (target/dist/runtimes,
# by JDK and module list), the AOT cache is not trained (the package lacks /usr/lib/ernic/ernic.aot, which the
# launcher then does without) and nothing is compressed. Its contents list is the full package's less ernic.aot.
#
# Layout of the installed package: /usr/bin/ernic (the launcher), /usr/lib/ernic/{runtime,app,ernic.aot,
# serve.jvm-options,classpath.jvm-options}, /usr/lib/systemd/system/ernic@.service, /usr/share/doc/ernic.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(dirname "$HERE")"
kind=${1:-} version=${2:-}
say() { printf 'ernic: %s\n' "$*" >&2; }
die() { say "$*"; exit 2; }
[[ ($kind == deb || $kind == image) && -n $version ]] || die "usage: packaging/dist.sh deb|image VERSION"
[[ -x ${JAVA_HOME:-}/bin/jpackage ]] || die "packaging needs a JDK 25 with jpackage and jlink (JAVA_HOME is '${JAVA_HOME:-unset}')"

OUT="$ROOT/target/dist"
QUICK=${ERNIC_DIST_QUICK:-}
RUNTIMES="$OUT/runtimes"
if [[ -n $QUICK ]]; then
    [[ $kind == deb && -d $QUICK ]] ||
        die "ERNIC_DIST_QUICK=DIR builds the .deb from the jars in DIR (kind '$kind', directory '$QUICK')"
    QUICK="$(cd "$QUICK" && pwd)"
    OUT="$(dirname "$QUICK")/quick-deb"
    # nothing compressed, in jpackage's dpkg-deb run as in ours
    export DPKG_DEB_COMPRESSOR_TYPE=none
fi
WORK="$OUT/work"
DEB_VERSION=${version//-/\~}
DEB="$OUT/ernic_${DEB_VERSION}_amd64.deb"
# Modules the jars name but the server does not need: jackson-databind's java.beans support is optional
# (java.desktop, which would also make the package depend on X11 libraries) and only the benchmarks' charts
# in the fuzzer's jar draw with AWT.
UNNEEDED_MODULES="java.desktop"

size() { du -sh "$1" | cut -f1; }

# The jars of the release archive ./ernic dist has just written (target/dist/ernic-VERSION.tar.gz): the package
# and the image run on the same ones.
jars() {
    local dir=$1 archive="$OUT/ernic-$version.tar.gz"
    if [[ -n $QUICK ]]; then
        rm -rf "$dir" && mkdir -p "$dir" && cp "$QUICK"/*.jar "$dir/"
        return
    fi
    [[ -f $archive ]] || die "no $archive: ./ernic dist --deb writes it first"
    rm -rf "$dir" "$WORK/archive" && mkdir -p "$WORK/archive"
    tar -C "$WORK/archive" -xzf "$archive" "ernic-$version/lib"
    mv "$WORK/archive/ernic-$version/lib" "$dir"
}

# The JDK modules the jars use, by jdeps. Netty's marshalling and protobuf codecs come with netty-codec but
# are never loaded, and their module descriptors name modules that are not there: they are not analysed.
modules() {
    local dir=$1 list=() j
    for j in "$dir"/*.jar; do
        [[ $j == *netty-codec-marshalling* || $j == *netty-codec-protobuf* ]] || list+=("$j")
    done
    local cp
    cp=$(IFS=:; echo "${list[*]}")
    "$JAVA_HOME/bin/jdeps" --print-module-deps --ignore-missing-deps --multi-release 25 -q \
        --class-path "$cp" "${list[@]}" | tr , '\n' | grep -vxF -f <(tr ' ' '\n' <<<"$UNNEEDED_MODULES") | paste -sd,
}

# What jpackage needs to build a .deb (fakeroot, dpkg-deb), installed as the other commands' prerequisites are.
deb_tools() {
    [[ ${ERNIC_NO_PREREQS:-0} == 1 ]] && return 0
    # shellcheck source=../tools/prereqs.sh
    source "$ROOT/tools/prereqs.sh"
    ernic_prereqs ${ERNIC_YES:+--yes} dist || exit $?
}

# The class path of the installed package, one jar after the other in C order: the AOT cache records it, so
# the training run and every later start must give the same order (a glob's order depends on the locale).
classpath_of() {
    local prefix=$1 dir=$2
    (cd "$dir" && LC_ALL=C ls -1 ./*.jar | sed "s|^\./|$prefix/|" | paste -sd:)
}

# Starts `ernic serve` from the tree with the package's JVM options, waits until it says it is serving (the
# socket opens before the device thread and the device exist) and for it to settle, and stops it with SIGTERM:
# the JVM then writes the AOT cache of what it loaded and linked (JDK 25, JEP 483). Waiting 2 s after the socket
# was not enough at a load of 10: the SIGTERM came before serve had finished starting (its log ended in a stack
# trace).
# Without the method profiles of the run (JEP 515, -AOTRecordTraining): no client connects to a training run, so
# they were profiles of start-up code alone, and replaying them had C2 compile that code at every start (about a
# third of the CPU before the socket opened).
train_aot() {
    local tree=$1 lib="$1/usr/lib/ernic" sock pid log
    sock="$WORK/train.sock" log="$WORK/train.log"
    rm -f "$sock" "$lib/ernic.aot"
    "$lib/runtime/bin/java" --enable-native-access=ALL-UNNAMED "@$lib/serve.jvm-options" \
        -XX:+UnlockDiagnosticVMOptions -XX:-AOTRecordTraining -XX:AOTCacheOutput="$lib/ernic.aot" \
        -cp "$(classpath_of "$lib/app" "$lib/app")" ernic.server.Main serve --socket "$sock" >"$log" 2>&1 &
    pid=$!
    local waited=0
    until grep -q '^ernic: serving ' "$log"; do
        kill -0 "$pid" 2>/dev/null || { cat "$log" >&2; die "the AOT training run of serve stopped before it was serving"; }
        sleep 0.1
        waited=$((waited + 1))
        ((waited < 1200)) || { kill "$pid"; die "the AOT training run of serve was not serving after 2 minutes"; }
    done
    sleep 2
    kill -TERM "$pid"
    wait "$pid" || true
    [[ -s $lib/ernic.aot ]] || { cat "$log" >&2; die "the AOT training run wrote no cache (its log is above)"; }
}

# The trimmed runtime of modules $1 in $2: jlink's, stripped, and kept in the cache of runtimes by JDK and modules,
# where a quick build takes it from.
runtime() {
    local mods=$1 dest=$2 key cached
    key=$(printf '%s\n' "$("$JAVA_HOME/bin/java" -version 2>&1)" "$mods" | sha256sum | cut -c1-16)
    cached="$RUNTIMES/$key"
    if [[ -n $QUICK && -x $cached/bin/java ]]; then
        say "jlink: the runtime of $mods from the cache ($cached)"
        cp -a "$cached" "$dest"
        return
    fi
    say "jlink: a runtime of $mods"
    "$JAVA_HOME/bin/jlink" --add-modules "$mods" --strip-debug --no-header-files --no-man-pages --output "$dest"
    # The JDK's programs and libraries keep their symbol tables; strip them as Debian's dh_strip would.
    if command -v strip >/dev/null; then
        find "$dest" -type f \( -name '*.so' -o -path '*/bin/*' -o -name jexec -o -name jspawnhelper \) \
            -exec strip --strip-unneeded --remove-section=.comment --remove-section=.note {} +
    fi
    # kept for the quick builds (a full build makes its own runtime every time)
    mkdir -p "$RUNTIMES" && rm -rf "$cached" "$cached.tmp" && cp -a "$dest" "$cached.tmp" && mv -T "$cached.tmp" "$cached"
}

build_deb() {
    deb_tools
    rm -rf "$WORK" && mkdir -p "$WORK"
    jars "$WORK/input"
    local mods
    mods=$(modules "$WORK/input")
    runtime "$mods" "$WORK/runtime"
    say "jpackage: the application image and the .deb${QUICK:+ (not compressed)}"
    "$JAVA_HOME/bin/jpackage" --type app-image --name ernic --dest "$WORK/image" --input "$WORK/input" \
        --main-jar "server-$version.jar" --main-class ernic.server.Main --runtime-image "$WORK/runtime" \
        --app-version "${version%%-*}"
    # /usr/bin/ernic is our launcher: it knows the commands and their JVM options.
    cp "$ROOT/ernic" "$WORK/image/ernic/bin/ernic"
    cp "$HERE/serve.jvm-options" "$WORK/image/ernic/lib/"
    echo "-cp $(classpath_of /usr/lib/ernic/app "$WORK/input")" >"$WORK/image/ernic/lib/classpath.jvm-options"
    mkdir -p "$WORK/resources"
    sed "s/DEB_VERSION/$DEB_VERSION/" "$HERE/deb/control" >"$WORK/resources/control"
    cp "$HERE"/deb/{postinst,prerm,postrm,copyright} "$WORK/resources/"
    "$JAVA_HOME/bin/jpackage" --type deb --app-image "$WORK/image/ernic" --name ernic --install-dir /usr \
        --app-version "${version%%-*}" --resource-dir "$WORK/resources" --dest "$WORK/jpackage"

    # What jpackage cannot place, and the native launcher's files that our launcher replaces.
    local tree="$WORK/tree" doc
    dpkg-deb -R "$WORK"/jpackage/*.deb "$tree"
    rm -f "$tree/usr/lib/ernic/lib/libapplauncher.so" "$tree/usr/lib/ernic/ernic.png" "$tree/usr/lib/ernic/app/ernic.cfg" \
        "$tree/usr/lib/ernic/app/.jpackage.xml"
    rmdir "$tree/usr/lib/ernic/lib" 2>/dev/null || true
    rm -f "$tree/DEBIAN/preinst"   # jpackage's, which does nothing for this package
    install -D -m 0644 "$HERE/ernic@.service" "$tree/usr/lib/systemd/system/ernic@.service"
    sed -i -e 's|/opt/ernic/ernic |/usr/bin/ernic |' -e 's|file:///opt/ernic/docs/|file:///usr/share/doc/ernic/|' \
        -e 's|Expects the release archive unpacked as$|Installed by the Debian package ernic, which makes|' \
        -e 's|^# /opt/ernic and a system user ernic|# the system user ernic|' "$tree/usr/lib/systemd/system/ernic@.service"
    doc="$tree/usr/share/doc/ernic"
    install -d "$doc/examples"
    install -m 0644 "$ROOT/README.md" "$ROOT"/docs/*.md "$ROOT"/docs/*.json "$doc/"
    gzip -9n -c "$ROOT/CHANGELOG.md" >"$doc/changelog.gz"
    install -m 0644 "$HERE/ernic.conf.example" "$doc/examples/"
    install -D -m 0644 "$HERE/deb/lintian-overrides" "$tree/usr/share/lintian/overrides/ernic"

    if [[ -z $QUICK ]]; then
        say "training the AOT cache on a serve run from the package's tree"
        train_aot "$tree"
    fi
    # The control file's size and checksums, for the tree as it is now; then mode 0755 on every directory.
    sed -i "s/^Installed-Size: .*/Installed-Size: $(du -sk --exclude=DEBIAN "$tree" | cut -f1)/" "$tree/DEBIAN/control"
    (cd "$tree" && find usr -type f -print0 | LC_ALL=C sort -z | xargs -0 md5sum >DEBIAN/md5sums)
    find "$tree" -type d -exec chmod 0755 {} +
    rm -f "$DEB"
    local compress=xz aot=" and the AOT cache"
    [[ -z $QUICK ]] || compress=none aot=""
    dpkg-deb --root-owner-group "-Z$compress" --build "$tree" "$DEB" >/dev/null
    [[ -z $aot ]] || aot+=" $(size "$tree/usr/lib/ernic/ernic.aot")"
    say "wrote $DEB ($(size "$DEB"); installed $(du -sh --exclude=DEBIAN "$tree" | cut -f1), of which the runtime $(size "$tree/usr/lib/ernic/runtime")$aot)"
    echo "$DEB"
}

build_image() {
    [[ -f $DEB && -d $WORK/tree/usr/lib/ernic ]] || build_deb >/dev/null
    command -v docker >/dev/null || die "--image needs docker (the docker.io package)"
    # shellcheck source=../guest/lib.sh
    source "$ROOT/guest/lib.sh"
    ensure_docker || exit $?
    local base
    base=$(docker images --format '{{.Repository}}:{{.Tag}}' "$ERNIC_BASE_REPO" | grep -v ':latest$' | head -n1)
    [[ -n $base ]] || die "--image builds on the guest image's Debian base ($ERNIC_BASE_REPO), which is not here: ./ernic guest build makes it"
    local tag="ernic-server:$version" ctx="$WORK/image-context"
    rm -rf "$ctx" && mkdir -p "$ctx"
    cp -a "$WORK/tree/usr" "$ctx/usr"
    cp "$HERE/image/Dockerfile" "$ctx/"
    say "docker build $tag (from $base)"
    docker build -q --build-arg "BASE_IMAGE=$base" -t "$tag" "$ctx" >/dev/null
    say "built the image $tag ($(docker image inspect -f '{{.Size}}' "$tag" | awk '{printf "%d MB", $1 / 1e6}'))"
    echo "$tag"
}

case "$kind" in
    deb) build_deb ;;
    image) build_image ;;
esac
