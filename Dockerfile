# tracedx in a small, non-root image (used by the Kubernetes example in
# docs/batch.md):
#
#   docker build -t tracedx .                       # or: podman build -t tracedx .
#   docker run --rm -v "$PWD:/data" tracedx analyze /data/trace.json.gz
#
# Stage 1 builds with cgo (the SQLite driver for Nsight Systems exports is C);
# stage 2 is distroless: glibc, CA certificates, no shell, user 65532.
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# VERSION stamps the release ("docker build --build-arg VERSION=v1.2.3 .").
ARG VERSION=0.1.0-dev
RUN CGO_ENABLED=1 go build -trimpath \
      -ldflags="-s -w -X github.com/tracedx/tracedx/internal/version.Version=${VERSION}" \
      -o /out/tracedx ./cmd/tracedx \
 && /out/tracedx version

FROM gcr.io/distroless/base-debian12:nonroot
COPY --from=build /out/tracedx /usr/local/bin/tracedx
USER nonroot:nonroot
WORKDIR /home/nonroot
ENTRYPOINT ["/usr/local/bin/tracedx"]
CMD ["--help"]
