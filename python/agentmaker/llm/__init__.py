"""The model client: ``client`` (``LLMClient`` over the Rust endpoint, ``LLMResponse``,
``LLMStream``) and ``dispatch`` (how the agent calls any object with a ``chat`` method)."""

from agentmaker.errors import LLMResponseError
from agentmaker.llm.client import LLMClient, LLMResponse, LLMStream, parse_chat_completion

__all__ = ["LLMClient", "LLMResponse", "LLMResponseError", "LLMStream", "parse_chat_completion"]
