# kernelvet as a container (the GitHub Action runs it). Pure Python: libclang ships its own
# libclang.so, so no LLVM or CUDA toolkit is installed.
FROM python:3.11-slim
WORKDIR /opt/kernelvet
COPY pyproject.toml README.md ./
COPY analyzers ./analyzers
COPY bot ./bot
RUN pip install --no-cache-dir . && useradd --create-home kernelvet
USER kernelvet
WORKDIR /github/workspace
ENTRYPOINT ["kernelvet"]
CMD ["scan", "."]
