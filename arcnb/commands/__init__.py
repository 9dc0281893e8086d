"""The subcommands of ``arcnb``, one module each (``score``, ``compare``, ``evaluate``,
``report``, ``notebooks``, ``sweep``, ``overlap``, ``candidates``, ``repeats``,
``arc3``): ``add(subparsers)`` adds its parser (its ``func`` is its ``run``) and
``run(args) -> int`` runs it. :mod:`arcnb.cli` lists them and assembles the command;
what they share is :mod:`arcnb.commands.common`."""
