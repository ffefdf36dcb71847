# syntax=docker/dockerfile:1
# warrant's image: a Rust build stage and a distroless, non-root runtime.
#
#   docker build -t warrant:0.1.0 --build-arg VERSION=0.1.0 --build-arg REVISION=$(git rev-parse HEAD) .
#
# The build context is only what the binary is built from (.dockerignore lets in Cargo.toml,
# Cargo.lock, vendor/ (a patched dependency, vendor/rskafka/PATCHED.md), src/ and authz-config/,
# whose warrant.yaml src/config.rs embeds).
# tests/docker-context/check.sh assembles exactly this context and runs this stage's commands
# offline, so a path the build needs and the context lacks fails CI.
ARG RUST_VERSION=1.95

FROM rust:${RUST_VERSION}-bookworm AS build
WORKDIR /src
# Dependencies first, in a layer of their own: it is rebuilt only when Cargo.toml, Cargo.lock or
# vendor/ change. Cargo reads every target the manifest declares (the benches, the integration test),
# so each gets an empty stand-in; only the binary is built.
COPY Cargo.toml Cargo.lock ./
COPY vendor ./vendor
RUN mkdir -p src tests/it benches \
 && echo 'fn main() {}' > src/main.rs \
 && : > src/lib.rs \
 && : > tests/it/main.rs \
 && for bench in $(sed -n '/^\[\[bench\]\]/{n;s/^name = "\(.*\)"$/\1/p}' Cargo.toml); do \
      echo 'fn main() {}' > "benches/$bench.rs"; \
    done
RUN cargo build --release --locked --bin warrant
# The sources. Their modification times may be older than the stand-ins' build, so the two
# entry points are touched: cargo then rebuilds the crate instead of keeping the empty one.
COPY src ./src
COPY authz-config ./authz-config
RUN touch src/lib.rs src/main.rs \
 && cargo build --release --locked --bin warrant \
 && ./target/release/warrant --version | grep '^warrant '

FROM gcr.io/distroless/cc-debian12:nonroot
ARG VERSION=0.1.0
ARG REVISION=unknown
LABEL org.opencontainers.image.title="warrant" \
      org.opencontainers.image.description="Kubernetes authorization and admission webhook: a deletion defense in three rings" \
      org.opencontainers.image.source="https://github.com/warrant-dev/warrant" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.licenses="Apache-2.0"
COPY --from=build /src/target/release/warrant /usr/local/bin/warrant
COPY authz-config /etc/warrant/authz-config
# distroless' nonroot user (65532); the chart's securityContext asks for the same numbers.
USER 65532:65532
EXPOSE 8443
ENTRYPOINT ["/usr/local/bin/warrant"]
CMD ["serve", "--config", "/etc/warrant/authz-config/warrant.yaml", "--listen", "0.0.0.0:8443", \
     "--tls-cert-file", "/etc/warrant/tls/tls.crt", "--tls-private-key-file", "/etc/warrant/tls/tls.key", \
     "--client-ca-file", "/etc/warrant/tls/client-ca.crt"]
