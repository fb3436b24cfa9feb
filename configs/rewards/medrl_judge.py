"""Calls the LLM judge MedRL Studio points a reward function at (python3 stdlib only, so it runs in any training env).

The judge is an OpenAI-compatible server (vLLM, SGLang): MEDRL_JUDGE_URL (base URL ending in /v1), MEDRL_JUDGE_MODEL
(served model name) and MEDRL_JUDGE_API_KEY come from the environment: the playground and `medrl reward run --judge`
set them; in training, export them in the job's environment instead of hard-coding a URL in the reward file.
"""
import json
import os
import re
import time
import urllib.error
import urllib.request


def judge_settings():
    url, model = os.environ.get("MEDRL_JUDGE_URL"), os.environ.get("MEDRL_JUDGE_MODEL")
    for name, value in (("MEDRL_JUDGE_URL", url), ("MEDRL_JUDGE_MODEL", model)):
        if not value:
            raise RuntimeError(f"{name} is not set: pick a judge in the playground (or --judge NAME), give the run a judge "
                               f"(medrl.yaml judges / the spec's services), or export MEDRL_JUDGE_URL and MEDRL_JUDGE_MODEL")
    # A judge without --api-key accepts any bearer token; "EMPTY" is the OpenAI client's convention for that.
    return url.rstrip("/"), model, os.environ.get("MEDRL_JUDGE_API_KEY") or "EMPTY"


def ask_judge(prompt, max_tokens=512, attempts=4, timeout=120):
    """The judge's answer to one user message (temperature 0, seed 42). Retries 429 (after retry-after), 5xx and
    dropped connections; raises with the last error after `attempts`."""
    url, model, key = judge_settings()
    body = json.dumps({"model": model, "messages": [{"role": "user", "content": prompt}], "temperature": 0, "seed": 42,
                       "max_tokens": max_tokens}).encode("utf-8")
    last = None
    for attempt in range(attempts):
        if attempt:
            time.sleep(wait)
        request = urllib.request.Request(f"{url}/chat/completions", data=body, method="POST",
                                         headers={"Content-Type": "application/json", "Authorization": f"Bearer {key}"})
        wait = 0.25 * 2 ** attempt
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                return json.loads(response.read())["choices"][0]["message"]["content"]
        except urllib.error.HTTPError as error:
            last = f"judge HTTP {error.code}: {error.read()[:200].decode('utf-8', 'replace')}"
            if error.code in (401, 403):
                last += " (check MEDRL_JUDGE_API_KEY)"
            if error.code != 429 and error.code < 500:
                break
            after = error.headers.get("retry-after")
            if after and re.fullmatch(r"\d+(\.\d+)?", after):
                wait = float(after)
        except (urllib.error.URLError, ConnectionError, TimeoutError, json.JSONDecodeError, KeyError) as error:
            last = f"judge request failed: {type(error).__name__}: {error}"
    raise RuntimeError(last)


def json_score(answer, field="score"):
    """The numeric `field` of the first JSON object in a judge answer, else the number after "score", else None."""
    match = re.search(r"\{.*?\}", answer, re.S)
    if match:
        try:
            value = json.loads(match.group(0)).get(field)
            return float(value) if value is not None else None
        except (ValueError, AttributeError, TypeError):
            pass
    match = re.search(r"score\s*[:=]?\s*(-?\d+(?:\.\d+)?)", answer, re.I)
    return float(match.group(1)) if match else None
