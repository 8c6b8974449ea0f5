#!/bin/sh
# the deployment that serves: TP 2, fp8 KV cache, no prefix caching
vllm serve meta-llama/Llama-3.1-70B-Instruct \
  --tensor-parallel-size=2 \
  --kv-cache-dtype fp8 \
  --quantization fp8 \
  --no-enable-prefix-caching
