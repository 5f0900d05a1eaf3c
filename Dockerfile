# kernelvet as a container; the GitHub Action (action.yml) runs `kernelvet action` in it. Pure
# Python: libclang's wheel ships libclang.so, so no LLVM or CUDA toolkit is installed.
#
#   docker build -t kernelvet .
#   docker run --rm -v "$PWD:/src" -w /src kernelvet scan .
#
# tests/test_docker_image.py replays this file's ARG, COPY and RUN steps in order, in a fresh
# virtual environment, and runs the installed kernelvet from another directory: keep every step
# a plain shell command over ${SRC} so that the replay stays exact.

# python:3.11.14-slim-bookworm, pinned by the digest of its multi-platform index.
FROM python:3.11.14-slim-bookworm@sha256:65a93d69fa75478d554f4ad27c85c1e69fa184956261b4301ebaf6dbb0a3543d

# Where the sources are copied to build the wheel; removed once it is installed, so the package
# can only be imported from site-packages (never from a source tree beside it).
ARG SRC=/tmp/kernelvet-src

# git: the diff-aware modes read the base revision of the checkout. git is told the workspace is
# safe whoever owns it (the runner's user owns the mounted workspace; actions run as root).
RUN apt-get update \
 && apt-get install -y --no-install-recommends git \
 && rm -rf /var/lib/apt/lists/* \
 && git config --system --add safe.directory '*'

# Dependencies first, in their own layer, exactly as locked (versions and hashes): a change to
# kernelvet's code rebuilds only the layers below. No stub package is installed here.
COPY requirements.lock ${SRC}/requirements.lock
RUN pip install --no-cache-dir --require-hashes -r ${SRC}/requirements.lock

# The sources (.dockerignore keeps build/, *.egg-info, .venv, caches and tests out), built into a
# wheel in a fresh directory and installed from it; then the import is checked from /, outside any
# source tree, and the sources are removed.
COPY pyproject.toml README.md ${SRC}/
COPY analyzers ${SRC}/analyzers
COPY bot ${SRC}/bot
RUN rm -rf ${SRC}/build ${SRC}/*.egg-info \
 && pip wheel --no-cache-dir --no-deps --wheel-dir ${SRC}/dist ${SRC} \
 && pip install --no-cache-dir --no-deps --no-index ${SRC}/dist/kernelvet-*.whl \
 && rm -rf ${SRC} \
 && cd / \
 && python -c "import analyzers, bot.cli, clang.cindex, z3; assert 'site-packages' in analyzers.__file__, analyzers.__file__" \
 && kernelvet --version

# GitHub runs Docker actions as root with the workspace mounted at /github/workspace and sets the
# working directory itself: no USER and no WORKDIR here.
ENTRYPOINT ["kernelvet"]
CMD ["scan", "."]
