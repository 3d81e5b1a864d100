#!/usr/bin/env python3
"""Converts litellm's bundled price table to smart-tee's (src/read/summary/prices.json): the chat
models of Anthropic (claude-*), OpenAI (gpt-*, o1/o3/o4*, codex*) and Google (gemini-*), each
with input, output, cache read and cache write in USD per million tokens (docs/health.md).

    pip download litellm==VERSION --no-deps -d /tmp/litellm
    unzip -o /tmp/litellm/litellm-VERSION-*.whl 'litellm/model_prices_and_context_window_backup.json' -d /tmp/litellm
    tests/prices/from_litellm.py /tmp/litellm/litellm/model_prices_and_context_window_backup.json \
        VERSION DATE > src/read/summary/prices.json

DATE is the day PyPI received that release (its upload time). A dated name whose undated name
has the same prices is left out: smart-tee strips a date suffix when matching.
"""
import json
import re
import sys

NAMES = re.compile(r"^(claude-|gpt-|o[1-9]|codex|gemini-)")
PROVIDERS = {"anthropic", "openai", "gemini", "vertex_ai-language-models"}
MODES = {"chat", "responses"}
# Names of models that are not an agent's chat model: speech, images, search previews.
SKIP = re.compile(r"audio|realtime|tts|transcribe|image|search|embedding|live|preview-tts|computer-use")
DATE = re.compile(r"-(\d{8}|\d{4}-\d{2}-\d{2})$")
FIELDS = [("input", "input_cost_per_token"), ("output", "output_cost_per_token"),
          ("cache_read", "cache_read_input_token_cost"),
          ("cache_write", "cache_creation_input_token_cost")]


def per_million(x):
    # Decimal-exact enough: 3e-06 per token is 3.0 per million; rounding drops float noise.
    return float(f"{x * 1e6:.6g}")


def main(path, version, date):
    src = json.load(open(path))
    models = {}
    for name, v in sorted(src.items()):
        if not isinstance(v, dict) or "/" in name or not NAMES.match(name) or SKIP.search(name):
            continue
        if v.get("litellm_provider") not in PROVIDERS or v.get("mode") not in MODES:
            continue
        if not isinstance(v.get("input_cost_per_token"), (int, float)) or \
                not isinstance(v.get("output_cost_per_token"), (int, float)):
            continue
        models[name] = {k: per_million(v[f]) for k, f in FIELDS if isinstance(v.get(f), (int, float))}
    for name in list(models):
        m = DATE.search(name)
        if m and models.get(name[:m.start()]) == models[name]:
            del models[name]
    out = {
        "date": date,
        "source": f"litellm {version} (PyPI, uploaded {date}), "
                  "litellm/model_prices_and_context_window_backup.json",
        "unit": "USD per million tokens",
        "models": models,
    }
    lines = [json.dumps({k: out[k] for k in ("date", "source", "unit")})[:-1] + ', "models": {']
    lines.append(",\n".join(f"  {json.dumps(k)}: {json.dumps(v)}" for k, v in models.items()))
    lines.append("}}")
    sys.stdout.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main(*sys.argv[1:4])
