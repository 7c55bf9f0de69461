"""Every module of the package imports, including the command line that no other test reaches."""

import importlib
import pkgutil
import unittest

import stockcheck


class PackageTest(unittest.TestCase):
    def test_every_module_imports(self) -> None:
        names = [info.name for info in pkgutil.iter_modules(stockcheck.__path__)]
        self.assertIn("cli", names)
        for name in names:
            with self.subTest(module=name):
                importlib.import_module(f"stockcheck.{name}")


if __name__ == "__main__":
    unittest.main()
