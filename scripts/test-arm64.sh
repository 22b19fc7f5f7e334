#!/usr/bin/env bash
# The JVM library's native runtime on arm64 Linux, under emulation: Debian's
# arm64 JRE (unpacked by scripts/setup.sh, never installed) runs under
# qemu-user the library's tests that hold the runtimes to each other
# (RuntimesAgreeTest: NATIVE loads from the jar and rewrites every fetch,
# errors included, as COMPILER does), to the Rust core (FixtureTest), to
# Kafka's own classes on every kind of batch (BatchKindsTest) and to the
# refusals bad input gets (BadInputTest), with JUnit's console launcher and the published jar on the class path, after
# checking that the jar carries both native libraries. Needs `mvn install`
# in jvm/ first. Bounded by ARM64_TEST_SECONDS (default 900); where qemu
# cannot run the JRE, it says so and skips.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
enter_root
ensure_arm64_jre
# The published jar carries both native libraries.
jar=$(python3 - <<'PY'
import glob, sys, zipfile
jars = [j for j in glob.glob("jvm/library/target/mirrorpid-jvm-*.jar") if not j.endswith(("-sources.jar", "-javadoc.jar", "-tests.jar"))]
if len(jars) != 1:
    sys.exit(f"error: expected one mirrorpid-jvm jar in jvm/library/target, found {jars} (mvn install in jvm/ first)")
names = set(zipfile.ZipFile(jars[0]).namelist())
for arch in ("x86_64", "aarch64"):
    if f"dev/mirrorpid/native/linux-{arch}/libmirrorpid_jni.so" not in names:
        sys.exit(f"error: {jars[0]} carries no native library for linux-{arch} (scripts/build.sh builds both)")
print(jars[0])
PY
)
if ! qemu-aarch64 -L "$ARM64_ROOT" "$ARM64_JAVA" -version >/dev/null 2>&1; then
  echo "SKIPPED: qemu-aarch64 cannot run the arm64 JRE on this machine ($(uname -m)); the arm64 test did not run" >&2
  exit 0
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd jvm/library && mvn -B -q --no-transfer-progress dependency:build-classpath -Dmdep.includeScope=test \
  -Dmdep.outputFile="$work/cp")
# JUnit's console launcher, at the version jvm/pom.xml pins.
launcher=$(python3 -c 'import re; print(re.search(r"<junit.platform.version>(.*?)<", open("jvm/pom.xml").read()).group(1))')
(cd jvm/library && mvn -B -q --no-transfer-progress dependency:copy \
  -Dartifact="org.junit.platform:junit-platform-console-standalone:$launcher" -DoutputDirectory="$work")
cp="jvm/library/target/test-classes:$jar:$(cat "$work/cp")"
log "arm64 Linux under qemu-user: NATIVE beside COMPILER, and both beside the Rust core"
qemu-aarch64 -L "$ARM64_ROOT" "$ARM64_JAVA" -XshowSettings:properties -version 2>&1 | grep -E '^ *(os\.arch|java\.vm\.version) ' >&2
timeout "${ARM64_TEST_SECONDS:-900}" qemu-aarch64 -L "$ARM64_ROOT" "$ARM64_JAVA" \
  -Dmirrorpid.root="$ROOT" -jar "$work"/junit-platform-console-standalone-*.jar execute \
  --disable-banner --details=summary --fail-if-no-tests -cp "$cp" \
  --select-class dev.mirrorpid.RuntimesAgreeTest --select-class dev.mirrorpid.FixtureTest \
  --select-class dev.mirrorpid.BatchKindsTest --select-class dev.mirrorpid.BadInputTest
