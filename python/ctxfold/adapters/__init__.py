"""Framework adapters: where an agent framework takes a pluggable history, ctxfold is
that history. Each adapter is its own module, imported only when asked for, and needs its
framework as an extra (``ctxfold[openai-agents]``):

    from ctxfold.adapters.openai_agents import ContextSession

Nothing is imported here, so ``import ctxfold`` never pulls in a framework.
"""
