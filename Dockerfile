# Build: cgo is needed by the Postgres SQL parser used for view lineage.
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
ARG BUILD_SHA=0000000
RUN CGO_ENABLED=1 go build -tags duckdb -ldflags "-X main.version=${VERSION} -X main.buildSHA=${BUILD_SHA}" -o /out/vigia ./cmd/vigia

FROM debian:bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates tzdata && rm -rf /var/lib/apt/lists/*
COPY --from=build /out/vigia /usr/local/bin/vigia
USER 65532:65532
EXPOSE 8080
ENV VIGIA_ADDR=0.0.0.0:8080
ENTRYPOINT ["/usr/local/bin/vigia"]
CMD ["serve"]
