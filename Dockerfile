# kernelvet as a container; the GitHub Action (action.yml) runs `kernelvet action` in it. Pure
# Python: libclang's wheel ships libclang.so, so no LLVM or CUDA toolkit is installed.
#
#   docker build -t kernelvet .
#   docker run --rm -v "$PWD:/src" -w /src kernelvet scan .
FROM python:3.11-slim

# git: the diff-aware modes read the base revision of the checkout.
RUN apt-get update \
 && apt-get install -y --no-install-recommends git \
 && rm -rf /var/lib/apt/lists/*

WORKDIR /opt/kernelvet
# Dependencies first, in their own layer: a change to kernelvet's code rebuilds only the last one.
COPY pyproject.toml README.md ./
RUN mkdir -p analyzers bot \
 && touch analyzers/__init__.py bot/__init__.py \
 && pip install --no-cache-dir . \
 && pip uninstall -y kernelvet
COPY analyzers ./analyzers
COPY bot ./bot
RUN pip install --no-cache-dir --no-deps . && python -c "import bot.cli, clang.cindex, z3"

# Not root. uid 1001 is the runner user of GitHub-hosted runners, which owns the mounted workspace
# and the files behind GITHUB_OUTPUT and GITHUB_STEP_SUMMARY: the action can write its SARIF file,
# cache and outputs there. git is told the workspace is safe whoever owns it.
RUN useradd --uid 1001 --create-home kernelvet \
 && git config --system --add safe.directory '*'
USER kernelvet
WORKDIR /github/workspace
ENTRYPOINT ["kernelvet"]
CMD ["scan", "."]
