"""OCR of scanned pages: the reader that picks an engine per page, the engines (Tesseract,
RapidOCR), their runtimes and layout, and the doubt that sends a page to a second reader."""
