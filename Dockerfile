# The gateway as a static binary on a distroless base. Not built in CI (no
# Docker engine on the project's machines); `docker build -t clamm-gateway .`
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /clamm-gateway ./cmd/clamm-gateway

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /clamm-gateway /clamm-gateway
ENV CLAMM_LISTEN=:8080
EXPOSE 8080
USER nonroot:nonroot
ENTRYPOINT ["/clamm-gateway"]
