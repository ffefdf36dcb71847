# Multi-stage build of warrant. It cannot be built on the development machines of this project
# (no Docker engine there); CI runs the Rust and API-server tiers instead.
FROM rust:1.95-bookworm AS build
WORKDIR /src
COPY Cargo.toml Cargo.lock ./
COPY src ./src
COPY authz-config ./authz-config
COPY tests ./tests
RUN cargo build --release --locked --bin warrant

FROM gcr.io/distroless/cc-debian12:nonroot
COPY --from=build /src/target/release/warrant /usr/local/bin/warrant
COPY authz-config /etc/warrant/authz-config
USER nonroot:nonroot
EXPOSE 8443
ENTRYPOINT ["/usr/local/bin/warrant"]
CMD ["serve", "--config", "/etc/warrant/authz-config/warrant.yaml", "--listen", "0.0.0.0:8443", \
     "--tls-cert-file", "/etc/warrant/tls/tls.crt", "--tls-private-key-file", "/etc/warrant/tls/tls.key", \
     "--client-ca-file", "/etc/warrant/tls/client-ca.crt"]
