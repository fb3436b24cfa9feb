"""Stand-in for SGLang's `python -m sglang.launch_server --model-path M --port P ...` (MedRL Studio).

No model is loaded and no GPU is used: like SGLang's launcher, which stays up with the server processes under it, it
runs standins/openai_server.py as a child (SGLang's OpenAI-compatible routes under /v1, and /health) with the same model, port, host, served model name and API key, and a startup delay
(MEDRL_STANDIN_STARTUP_SECONDS, default 2) so health goes from starting to ready. GPU flags (--tp, --mem-fraction-static,
...) are accepted and ignored. Python 3 standard library only.
"""
import argparse
import os
import signal
import subprocess
import sys


def main(argv):
    parser = argparse.ArgumentParser(prog="python -m sglang.launch_server", description="STAND-IN for SGLang's launch_server (MedRL Studio): serves through standins/openai_server.py, no model is loaded")
    parser.add_argument("--model-path", "--model", dest="model_path", required=True)
    parser.add_argument("--port", type=int, default=30000)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--served-model-name", default=None)
    parser.add_argument("--api-key", default=None)
    parser.add_argument("--tp", "--tp-size", dest="tp", type=int, default=1)
    parser.add_argument("--mem-fraction-static", type=float, default=None)
    args, ignored = parser.parse_known_args(argv)
    print("sglang.launch_server (STAND-IN, MedRL Studio): serving through standins/openai_server.py; no model is loaded", file=sys.stderr, flush=True)
    server = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "openai_server.py")
    cmd = [sys.executable, server, "serve", args.model_path, "--port", str(args.port), "--host", args.host,
           "--startup-seconds", os.environ.get("MEDRL_STANDIN_STARTUP_SECONDS", "2"), *ignored]
    if args.served_model_name:
        cmd += ["--served-model-name", args.served_model_name]
    env = dict(os.environ)
    if args.api_key:
        env["VLLM_API_KEY"] = args.api_key  # the stand-in server reads its key from here
    # The launcher keeps running (its command line stays in the process list, as SGLang's does) and ends with the server.
    child = subprocess.Popen(cmd, env=env)
    signal.signal(signal.SIGTERM, lambda *_: child.terminate())
    sys.exit(child.wait())


if __name__ == "__main__":
    main(sys.argv[1:])
