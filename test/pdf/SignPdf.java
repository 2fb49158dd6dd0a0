// An independent PDF signer and reader for the tests (Apache PDFBox 2 and Bouncy Castle, Debian's
// libpdfbox2-java and libbcpkix-java), compiled by test/pdf/tools.ts.
//   java SignPdf sign IN.pdf OUT.pdf KEY.p12 PASSWORD   an adbe.pkcs7.detached signature (ECDSA P-256, SHA-256),
//                                                       appended with PDFBox's saveIncremental
//   java SignPdf list IN.pdf                            one line per signature PDFBox finds:
//                                                       SubFilter, ByteRange, SHA-256 of its signed content
import java.io.*;
import java.nio.file.*;
import java.security.*;
import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import java.util.*;
import org.apache.pdfbox.pdmodel.PDDocument;
import org.apache.pdfbox.pdmodel.interactive.digitalsignature.PDSignature;
import org.bouncycastle.cert.jcajce.JcaCertStore;
import org.bouncycastle.cms.*;
import org.bouncycastle.cms.jcajce.JcaSignerInfoGeneratorBuilder;
import org.bouncycastle.operator.jcajce.*;

public class SignPdf {
  public static void main(String[] a) throws Exception {
    if (a[0].equals("list")) list(a[1]);
    else sign(a[1], a[2], a[3], a[4].toCharArray());
  }

  static void list(String file) throws Exception {
    byte[] bytes = Files.readAllBytes(Paths.get(file));
    try (PDDocument doc = PDDocument.load(bytes)) {
      for (PDSignature sig : doc.getSignatureDictionaries()) {
        byte[] digest = MessageDigest.getInstance("SHA-256").digest(sig.getSignedContent(bytes));
        StringBuilder hex = new StringBuilder();
        for (byte b : digest) hex.append(String.format("%02x", b));
        System.out.println(sig.getSubFilter() + " " + Arrays.toString(sig.getByteRange()) + " " + hex);
      }
    }
  }

  static void sign(String in, String out, String p12, char[] pass) throws Exception {
    KeyStore ks = KeyStore.getInstance("PKCS12");
    try (InputStream s = new FileInputStream(p12)) {
      ks.load(s, pass);
    }
    String alias = ks.aliases().nextElement();
    PrivateKey key = (PrivateKey) ks.getKey(alias, pass);
    Certificate[] chain = ks.getCertificateChain(alias);
    try (PDDocument doc = PDDocument.load(new File(in)); OutputStream o = new FileOutputStream(out)) {
      PDSignature sig = new PDSignature();
      sig.setFilter(PDSignature.FILTER_ADOBE_PPKLITE);
      sig.setSubFilter(PDSignature.SUBFILTER_ADBE_PKCS7_DETACHED);
      sig.setName("PDFBox test signer");
      sig.setSignDate(Calendar.getInstance());
      doc.addSignature(sig, content -> {
        try {
          CMSSignedDataGenerator gen = new CMSSignedDataGenerator();
          gen.addSignerInfoGenerator(new JcaSignerInfoGeneratorBuilder(new JcaDigestCalculatorProviderBuilder().build())
              .build(new JcaContentSignerBuilder("SHA256withECDSA").build(key), (X509Certificate) chain[0]));
          gen.addCertificates(new JcaCertStore(Arrays.asList(chain)));
          return gen.generate(new CMSProcessableByteArray(content.readAllBytes()), false).getEncoded();
        } catch (Exception e) {
          throw new IOException(e);
        }
      });
      doc.saveIncremental(o);
    }
  }
}
