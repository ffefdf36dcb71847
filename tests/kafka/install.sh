#!/usr/bin/env bash
# Installs the Apache Kafka broker the Kafka sink's tests run against (KRaft, one node, on
# loopback): the jars of org.apache.kafka:kafka_2.13 and kafka-tools with their runtime
# dependencies, copied from Maven Central by Maven (pom.xml beside this script) into
# ~/.cache/warrant-kafka-<version>/libs, once; later runs reuse them. Prints that directory.
# Needs Java 17 or later and Maven (Debian's packages, installed when missing).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
version="$(sed -n 's:.*<kafka.version>\(.*\)</kafka.version>.*:\1:p' "$here/pom.xml")"
dir="${WARRANT_KAFKA_CACHE:-$HOME/.cache/warrant-kafka-$version}"
if ! command -v java >/dev/null 2>&1 || ! command -v mvn >/dev/null 2>&1; then
  apt-get update -qq >&2 && apt-get install -y -qq openjdk-17-jre-headless maven >&2
fi
if [ ! -f "$dir/complete" ]; then
  rm -rf "$dir/libs"
  mvn -q -B -f "$here/pom.xml" dependency:copy-dependencies \
    -DoutputDirectory="$dir/libs" -DincludeScope=runtime >&2
  touch "$dir/complete"
fi
echo "$dir/libs"
