package ernic.s3;

import java.io.ByteArrayInputStream;
import java.util.ArrayList;
import java.util.List;
import javax.xml.stream.XMLInputFactory;
import javax.xml.stream.XMLStreamConstants;
import javax.xml.stream.XMLStreamException;
import javax.xml.stream.XMLStreamReader;

/**
 * XML for S3: a small writer with escaping, and a reader for request bodies (DeleteObjects,
 * CompleteMultipartUpload, CreateBucket) that refuses DTDs and external entities and bounds depth and size.
 */
final class S3Xml {
    static final String NS = "http://s3.amazonaws.com/doc/2006-03-01/";
    static final int MAX_NODES = 50_000, MAX_DEPTH = 16;

    /** An element: local name, its text (concatenated), its children. */
    record Node(String name, String text, List<Node> children) {
        Node child(String n) {
            for (Node c : children) {
                if (c.name.equals(n)) {
                    return c;
                }
            }
            return null;
        }

        /** The children named {@code n}, in order (unmodifiable). */
        List<Node> all(String n) {
            return children.stream().filter(c -> c.name.equals(n)).toList();
        }

        String childText(String n) {
            Node c = child(n);
            return c == null ? null : c.text.strip();
        }
    }

    private final StringBuilder sb = new StringBuilder(512);

    S3Xml(String root) {
        sb.append("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<").append(root).append(" xmlns=\"").append(NS)
                .append("\">");
    }

    /** An error document has no namespace. */
    static S3Xml bare(String root) {
        S3Xml x = new S3Xml(root);
        x.sb.setLength(0);
        x.sb.append("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<").append(root).append('>');
        return x;
    }

    S3Xml open(String name) {
        sb.append('<').append(name).append('>');
        return this;
    }

    S3Xml close(String name) {
        sb.append("</").append(name).append('>');
        return this;
    }

    S3Xml el(String name, Object text) {
        sb.append('<').append(name).append('>');
        escape(String.valueOf(text));
        sb.append("</").append(name).append('>');
        return this;
    }

    String end(String root) {
        return sb.append("</").append(root).append('>').toString();
    }

    private void escape(String s) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '<' -> sb.append("&lt;");
                case '>' -> sb.append("&gt;");
                case '&' -> sb.append("&amp;");
                case '"' -> sb.append("&quot;");
                case '\'' -> sb.append("&apos;");
                default -> {
                    if (c < 0x20 && c != '\t' && c != '\n' && c != '\r') {
                        sb.append("&#x").append(Integer.toHexString(c)).append(';');
                    } else {
                        sb.append(c);
                    }
                }
            }
        }
    }

    /** The document's root element, or null when it is not well-formed (or is too large or deep). */
    static Node parse(byte[] body) {
        XMLInputFactory f = XMLInputFactory.newFactory();
        f.setProperty(XMLInputFactory.SUPPORT_DTD, false);
        f.setProperty(XMLInputFactory.IS_SUPPORTING_EXTERNAL_ENTITIES, false);
        f.setProperty(XMLInputFactory.IS_REPLACING_ENTITY_REFERENCES, true);
        XMLStreamReader r = null;
        try {
            r = f.createXMLStreamReader(new ByteArrayInputStream(body));
            List<String> names = new ArrayList<>();
            List<StringBuilder> texts = new ArrayList<>();
            List<List<Node>> kids = new ArrayList<>();
            Node root = null;
            int nodes = 0;
            while (r.hasNext()) {
                int ev = r.next();
                if (ev == XMLStreamConstants.DTD || ev == XMLStreamConstants.ENTITY_REFERENCE) {
                    return null;
                }
                if (ev == XMLStreamConstants.START_ELEMENT) {
                    if (++nodes > MAX_NODES || names.size() >= MAX_DEPTH) {
                        return null;
                    }
                    names.add(r.getLocalName());
                    texts.add(new StringBuilder());
                    kids.add(new ArrayList<>());
                } else if (ev == XMLStreamConstants.CHARACTERS || ev == XMLStreamConstants.CDATA) {
                    if (!texts.isEmpty()) {
                        texts.getLast().append(r.getText());
                    }
                } else if (ev == XMLStreamConstants.END_ELEMENT) {
                    Node n = new Node(names.removeLast(), texts.removeLast().toString(), kids.removeLast());
                    if (kids.isEmpty()) {
                        root = n;
                    } else {
                        kids.getLast().add(n);
                    }
                }
            }
            return root;
        } catch (XMLStreamException | RuntimeException e) {
            return null;
        } finally {
            if (r != null) {
                try {
                    r.close();
                } catch (XMLStreamException ignored) {
                    // nothing held
                }
            }
        }
    }
}
