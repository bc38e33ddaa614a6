"""Drives `vaultdm serve` with the official `openai` Python package (PyPI).

Usage: python3 openai_client.py BASE_URL TOKEN
Prints one JSON object with what the client saw; tests/serve_openai_py.rs checks it.
"""
import json
import sys

import openai
from openai import OpenAI

base, token = sys.argv[1], sys.argv[2]
client = OpenAI(base_url=base, api_key=token, max_retries=0, timeout=30)
out = {"version": openai.__version__}

out["models"] = [m.id for m in client.models.list()]

system = {"role": "system", "content": "You narrate a grim mining town."}
first = {"role": "user", "content": "We look for Odessa Flint at the Brass Canary."}
r = client.chat.completions.create(model="vault-template", messages=[system, first])
out["plain"] = r.choices[0].message.content
out["plain_finish"] = r.choices[0].finish_reason
out["plain_usage"] = r.usage.total_tokens if r.usage else None

stream = client.chat.completions.create(
    model="vault-template/test-model",
    stream=True,
    stream_options={"include_usage": True},
    temperature=0.5,
    messages=[
        system,
        first,
        {"role": "assistant", "content": out["plain"]},
        {"role": "user", "content": "I ask her about the canary."},
    ],
)
text, finish, chunks = "", None, 0
for chunk in stream:
    chunks += 1
    if chunk.choices:
        if chunk.choices[0].delta.content:
            text += chunk.choices[0].delta.content
        if chunk.choices[0].finish_reason:
            finish = chunk.choices[0].finish_reason
out["stream"] = text
out["stream_finish"] = finish
out["stream_chunks"] = chunks

try:
    client.chat.completions.create(
        model="vault-template", messages=[{"role": "user", "content": "Again?"}]
    )
    out["error"] = None
except openai.APIStatusError as e:
    out["error"] = {"status": e.status_code, "code": getattr(e, "code", None), "message": str(e)}

try:
    OpenAI(base_url=base, api_key="wrong", max_retries=0).models.list()
    out["wrong_token"] = None
except openai.AuthenticationError as e:
    out["wrong_token"] = e.status_code

print(json.dumps(out))
