"""The prompt text of an OpenAI request (what the router hashes for prefix affinity and what an engine sees)."""
from __future__ import annotations


def prompt_text(body: dict, chat: bool) -> str:
    """Chat messages joined with their roles, or the completion prompt; ValueError naming the field."""
    if chat:
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            raise ValueError("messages: expected a non-empty list")
        parts = []
        for i, m in enumerate(messages):
            if not isinstance(m, dict):
                raise ValueError(f"messages[{i}]: expected an object")
            content = m.get("content", "")
            if isinstance(content, list):  # content parts: keep the text ones
                content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
            if not isinstance(content, str):
                raise ValueError(f"messages[{i}].content: expected a string or a list of parts")
            parts.append(f"<|{m.get('role', 'user')}|>{content}")
        return "\n".join(parts)
    prompt = body.get("prompt")
    if isinstance(prompt, list) and all(isinstance(p, str) for p in prompt):
        prompt = "".join(prompt)
    if not isinstance(prompt, str):
        raise ValueError("prompt: expected a string or a list of strings")
    return prompt
