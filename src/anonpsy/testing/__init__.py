"""Test tooling shipped with the package: a scripted OpenAI-compatible server for the LLM client."""

from anonpsy.testing.openai_server import Fault, LoggedRequest, ScriptedOpenAIServer

__all__ = ["Fault", "LoggedRequest", "ScriptedOpenAIServer"]
