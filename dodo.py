"""doit entry point for Lamina's index (written by `lamina init`): `doit list`, `doit info generation`."""

from lamina.index.build import dodo_namespace

globals().update(dodo_namespace(__file__))
